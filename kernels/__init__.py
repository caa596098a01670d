"""reconverge.kernels"""
