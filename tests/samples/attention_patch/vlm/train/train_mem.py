# Trains with FlashAttention in place of LLaMA's eager attention: the patch must run before transformers builds
# the model.
from vlm.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

replace_llama_attn_with_flash_attn()

from vlm.train.train import train  # noqa: E402

if __name__ == "__main__":
    train()
