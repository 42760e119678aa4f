PARTITION=${PARTITION:-"gpu"}
GPUS=${GPUS:-32}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
NODES=$((GPUS / GPUS_PER_NODE))
TOTAL=${TOTAL:-256}
PER_GPU=${PER_GPU:-4}
ACC=$((TOTAL / PER_GPU / GPUS))

srun -p ${PARTITION} \
  --gres=gpu:${GPUS_PER_NODE} \
  --nodes=${NODES} \
  --ntasks=${GPUS} \
  --ntasks-per-node=${GPUS_PER_NODE} \
  --kill-on-bad-exit=1 \
  python -u finetune.py \
  --llm_path "lmsys/vicuna-7b-v1.5" \
  --output_dir out \
  --bf16 True \
  --per_device_train_batch_size ${PER_GPU} \
  --gradient_accumulation_steps ${ACC} \
  --use_ckpt True \
  2>&1 | tee -a log.txt
