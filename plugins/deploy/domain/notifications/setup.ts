import type { Server } from '@hapi/hapi';

import { runs } from '../runs/run-service.ts';
import { notifications } from './notification-service.ts';

const FAILED_STATES = new Set(['failed', 'rolled back', 'interrupted']);

/** Notifications hear of the runs' ends (a failed, rolled-back or interrupted run); their sending stops with the server. */
export default function setUpNotifications(server: Server): void {
    runs(server).onEnded(async (run) => {
        if (!FAILED_STATES.has(run.state)) {
            return;
        }

        await notifications(server).notify({
            kind: 'run-failed',
            app: run.app,
            summary: `${run.kind} of ${run.app} ${run.state === 'rolled back' ? 'was rolled back' : run.state}`,
            details: { run: run.id, kind: run.kind, state: run.state, error: run.error },
        });
    });
    server.ext('onPreStop', () => notifications(server).stop());
}
