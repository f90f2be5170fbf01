/** One deploy-manager run that changes the host (deploy, nginx update, action, delete); see plugins/deploy/domain/engine. */
import { RolledBackError, actOnApp, applySite, deployApp } from '../plugins/deploy/domain/engine/app-runs.ts';
import { deleteApp } from '../plugins/deploy/domain/engine/delete-app.ts';
import { type AppRunData, RunContext } from '../plugins/deploy/domain/engine/run-context.ts';
import type { RunMessage } from '../plugins/deploy/domain/runs/run-service.ts';
import { done, jobData, post, withLazyDatabase } from '../lib/worker.ts';

const data = jobData<AppRunData>();
const send = (message: RunMessage) => post(message);
const work = { deploy: deployApp, compose: deployApp, sso: deployApp, nginx: applySite, action: actOnApp, delete: deleteApp }[data.kind];

await withLazyDatabase(async (database) => {
    const context = new RunContext(data.config, data, database, send);
    try {
        (data.notes ?? []).forEach((note) => context.log(note, 'warning'));
        await work(context);
        send({ type: 'end', state: 'succeeded' });
    } catch (error) {
        const message = (error as Error).message;
        if (!(error instanceof RolledBackError)) {
            context.log(`Failed: ${message}`, 'error');
        }

        send({ type: 'end', state: error instanceof RolledBackError ? 'rolled back' : 'failed', error: message });
    }
});
done();
