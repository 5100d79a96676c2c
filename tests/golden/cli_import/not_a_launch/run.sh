#!/bin/bash
set -x
nvidia-smi
echo "training starts"
python evaluate.py --checkpoint ckpt/
