# BOM and CRLF line endings
import transformers
args = transformers.TrainingArguments(output_dir="ö", per_device_train_batch_size=16)
