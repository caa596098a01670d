"""reconverge.golden"""
