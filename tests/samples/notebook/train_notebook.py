# Databricks notebook source
# MAGIC %md
# MAGIC ## Fine-tune a small model
# MAGIC Runs on a cluster of GPU nodes; the training itself is a DeepSpeed module launched from a shell cell.

# COMMAND ----------

# MAGIC %pip install -r requirements.txt

# COMMAND ----------

import os

num_gpus = int(os.environ.get("NUM_GPUS", "8"))
output_dir = "/dbfs/checkpoints/run"

# COMMAND ----------

%load_ext tensorboard

# COMMAND ----------

!deepspeed --num_gpus {num_gpus} \
    --module training.trainer \
    --deepspeed config/ds_z3.json \
    --per-device-train-batch-size 4 \
    --output-dir {output_dir}

# COMMAND ----------

%%bash
nvidia-smi
ls -la {output_dir}

# COMMAND ----------

print("done", output_dir)
