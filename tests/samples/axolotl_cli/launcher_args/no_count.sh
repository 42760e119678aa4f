#!/bin/bash
axolotl train examples/lora-8b.yml
