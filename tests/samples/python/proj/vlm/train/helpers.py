def rank0_log(*parts):
    print(*parts)
