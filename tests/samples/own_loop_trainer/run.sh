port=$(shuf -i25000-30000 -n1)

# full-parameter fine-tuning with the fused-update optimizer, one GPU
deepspeed --master_port "$port" --include localhost:0 src/train_fused.py config/args_fused.yaml
