# stands in for the training script: `check` looks for the script python3 would run
