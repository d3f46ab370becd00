/**
 * The parts of `cluster-api serve`, in start order (ARCHITECTURE.md's local stack), and which of them
 * `--disable` may turn off (the API server is what the others are clients of).
 */
export const PartNames = ['api-server', 'controller-manager', 'scheduler', 'node', 'registry', 'broker', 'gateway'] as const;
export type PartName = (typeof PartNames)[number];
export const Disableable: readonly PartName[] = PartNames.filter((n) => n !== 'api-server');
