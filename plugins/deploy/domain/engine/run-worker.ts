/** How a run's worker (jobs/app-run.ts, jobs/app-backup.ts) executes its work and tells the server how it ended. */
import type { JobData } from '../../../../lib/worker.ts';
import { post, withLazyDatabase } from '../../../../lib/worker.ts';
import type { RunMessage } from '../runs/run-service.ts';
import { RolledBackError } from './app-runs.ts';
import { type AppRunData, RunContext } from './run-context.ts';
import { forgetJournal } from './run-journal.ts';

/**
 * Runs `work` with the app's run context; a RolledBackError ends the run `rolled back`, any other error `failed`. The
 * run's journal, needed only after a crash, goes before the end is told, so that a run taken over is never one that
 * had finished.
 */
export async function executeAppRun(data: JobData & AppRunData, work: (context: RunContext) => Promise<void>): Promise<void> {
    const send = (message: RunMessage) => post(message);
    await withLazyDatabase(async (database) => {
        const context = new RunContext(data.config, data, database, send);
        let ending: RunMessage;
        try {
            await work(context);
            ending = { type: 'end', state: 'succeeded' };
        } catch (error) {
            const message = (error as Error).message;
            if (!(error instanceof RolledBackError)) {
                context.log(`Failed: ${message}`, 'error');
            }

            ending = { type: 'end', state: error instanceof RolledBackError ? 'rolled back' : 'failed', error: message };
        }

        await forgetJournal(await database(), data.config.dataDir, data.runId).catch((error: unknown) =>
            context.log(`The run's journal could not be cleared: ${(error as Error).message}`, 'warning'),
        );
        send(ending);
    });
}
