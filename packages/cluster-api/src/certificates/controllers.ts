/** The certificates controllers as kube-controller-manager names them, for the controller table (controllers/index.ts). */
import type { ControllerContext } from '../controllers/context.js';
import type { Controller } from '../controllers/loop.js';
import { ApprovingControllerName, startCsrApproving } from './approver.js';
import { CleanerControllerName, startCsrCleaner } from './cleaner.js';
import { SigningControllerName, startCsrSigning } from './signing.js';

export const certificateControllers: Readonly<Record<string, (ctx: ControllerContext) => Controller>> = {
  [ApprovingControllerName]: startCsrApproving,
  [SigningControllerName]: startCsrSigning,
  [CleanerControllerName]: startCsrCleaner,
};
