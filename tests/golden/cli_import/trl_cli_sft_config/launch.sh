trl sft --config sft_config.yaml
