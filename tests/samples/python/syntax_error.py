import transformers

# les données: café
args = transformers.TrainingArguments(output_dir="é", per_device_train_batch_size=4
