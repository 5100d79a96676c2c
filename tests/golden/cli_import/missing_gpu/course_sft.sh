# The reference case's job (Qwen3.6-35B-A3B full SFT on 5 nodes x 8 H20, Megatron-SWIFT on
# megatron-core 0.16) as the command that launches it on each node. The course gives the
# settings, not the command; this is that command, written for the importer's acceptance test.
NNODES=5 \
NODE_RANK=$RANK \
NPROC_PER_NODE=8 \
megatron sft \
    --model Qwen/Qwen3.6-35B-A3B \
    --dataset train.jsonl \
    --train_type full \
    --tensor_model_parallel_size 1 \
    --pipeline_model_parallel_size 1 \
    --context_parallel_size 1 \
    --expert_model_parallel_size 8 \
    --expert_tensor_parallel_size 1 \
    --sequence_parallel false \
    --micro_batch_size 1 \
    --global_batch_size 80 \
    --max_length 49152 \
    --packing false \
    --recompute_granularity full \
    --recompute_method uniform \
    --recompute_num_layers 1 \
    --use_distributed_optimizer true \
    --grad_reduce_in_bf16 true \
    --cross_entropy_loss_fusion true \
    --freeze_vit false \
    --finetune true \
    --num_train_epochs 2 \
    --lr 1e-5 \
    --save output/qwen3.6-35b-a3b-sft
