NPROC_PER_NODE=4 llamafactory-cli train sft.yaml per_device_train_batch_size=1 cutoff_len=8192
