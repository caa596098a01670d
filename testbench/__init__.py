"""reconverge.testbench"""
