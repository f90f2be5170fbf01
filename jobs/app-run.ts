/** One deploy-manager run that changes the host (deploy, nginx update, action, delete); see plugins/deploy/domain/engine. */
import { RolledBackError, actOnApp, applySite, deployApp } from '../plugins/deploy/domain/engine/app-runs.ts';
import { deleteApp } from '../plugins/deploy/domain/engine/delete-app.ts';
import { type AppRunData, RunContext } from '../plugins/deploy/domain/engine/run-context.ts';
import { forgetJournal } from '../plugins/deploy/domain/engine/run-journal.ts';
import type { RunMessage } from '../plugins/deploy/domain/runs/run-service.ts';
import { loadIdpKinds, useIdpKindFolders } from '../plugins/idp/idp-kinds.ts';
import { done, jobData, post, withLazyDatabase } from '../lib/worker.ts';

const data = jobData<AppRunData>();
const send = (message: RunMessage) => post(message);
// The identity-provider kinds as the server has them (IDP_KINDS_DIRS too): the run's checks know each one's forward auth.
useIdpKindFolders(data.config.idpKindDirs);
await loadIdpKinds();

const work = { deploy: deployApp, compose: deployApp, sso: deployApp, nginx: applySite, action: actOnApp, delete: deleteApp }[data.kind];

await withLazyDatabase(async (database) => {
    const context = new RunContext(data.config, data, database, send);
    let ending: RunMessage;
    try {
        (data.notes ?? []).forEach((note) => context.log(note, 'warning'));
        await work(context);
        ending = { type: 'end', state: 'succeeded' };
    } catch (error) {
        const message = (error as Error).message;
        if (!(error instanceof RolledBackError)) {
            context.log(`Failed: ${message}`, 'error');
        }

        ending = { type: 'end', state: error instanceof RolledBackError ? 'rolled back' : 'failed', error: message };
    }

    // The run ended here (done, or undone by its own rollback): its journal, needed only after a crash, goes before
    // the end is told, so that a run taken over is never one that had finished.
    await forgetJournal(await database(), data.config.dataDir, data.runId).catch((error: unknown) =>
        context.log(`The run's journal could not be cleared: ${(error as Error).message}`, 'warning'),
    );
    send(ending);
});
done();
