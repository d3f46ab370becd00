/**
 * Preloaded (`node --require`) into every container process the node agent starts: when the agent's
 * IPC channel closes (the agent ended, even by SIGKILL), the container ends too, so no process outlives
 * the agent that reports it. The channel is unref'd: it never keeps a finished program alive.
 */
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
process.channel?.unref();
