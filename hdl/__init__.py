"""reconverge.hdl"""
