// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title MemoryChainAnchors
/// @notice A public, append-only log of memory-chain checkpoints. Anyone may anchor; the
///         contract keeps no storage, charges no fees and has no owner: each call only emits
///         an Anchored event, so the log is the chain's event history.
/// @dev chainId is the memory chain's id; treeSize and root are the checkpoint's Merkle tree
///      size and root; checkpointHash is the BLAKE3-256 hash of the signed checkpoint note's
///      bytes. The contract checks none of them: a verifier reads the event and compares it
///      with the checkpoint it holds, and trusts the sender only as far as it trusts that key.
contract MemoryChainAnchors {
    /// @notice Emitted once per anchor call.
    event Anchored(
        bytes32 indexed chainId,
        uint64 treeSize,
        bytes32 root,
        bytes32 checkpointHash,
        address indexed sender
    );

    /// @notice Record a checkpoint of the memory chain `chainId` in the event log.
    /// @param chainId the memory chain's id
    /// @param treeSize the checkpoint's Merkle tree size
    /// @param root the checkpoint's Merkle root
    /// @param checkpointHash BLAKE3-256 of the signed checkpoint note's bytes
    function anchor(bytes32 chainId, uint64 treeSize, bytes32 root, bytes32 checkpointHash)
        external
    {
        emit Anchored(chainId, treeSize, root, checkpointHash, msg.sender);
    }
}
