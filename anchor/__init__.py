"""Anchoring checkpoints on EVM chains (specs/FORMAT.md section 18).

payload    the 132 bytes an anchor commits to (pure, no web3)
networks   built-in and configured networks, RPC URLs
account    the EVM account (env key or encrypted keystore)
artifact   the compiled registry contract
rpc        JSON-RPC over web3.py, errors in the project's terms
post       anchor a checkpoint, deploy the registry
audit      re-check every anchor against the node and the local chain

web3 is imported only inside rpc/post/audit calls, never at import time of
this package, so the rest of the CLI stays fast.
"""
