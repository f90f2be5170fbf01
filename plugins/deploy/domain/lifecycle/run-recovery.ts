/** The server's side of undoing an interrupted run: the app's domain and provider, then its journal undone, then the app's state. */
import type { Server } from '@hapi/hapi';

import { appAccess } from '../access/access-service.ts';
import { apps } from '../apps/app-service.ts';
import type { DraftInput } from '../apps/draft-shape.ts';
import { type AppRunKind, RunContext } from '../engine/run-context.ts';
import { DRAFT_IN_JOURNAL, journalOf } from '../engine/run-journal.ts';
import { undoFromJournal } from '../engine/run-recovery.ts';
import type { RecoverRun } from '../runs/run-service.ts';

export function recoverFromJournal(server: Server): RecoverRun {
    return async (run, post) => {
        const knex = server.app.knex;
        if (run.kind === 'delete') {
            // A delete is not undone but finished: what it removed is gone, and deleting the app again removes the rest.
            await knex('dp_apps').where({ name: run.app }).update({ state: 'failed' });
            post({
                type: 'event',
                step: 'recovery',
                level: 'warning',
                text: 'The delete was interrupted: delete the app again to finish it',
            });
            return;
        }

        if ((await journalOf(knex, run.id)).length === 0) {
            return;
        }

        const app = await apps(server).require(run.app);
        const access = await appAccess(server).forRun(app);
        const data = { runId: run.id, app: run.app, kind: run.kind as AppRunKind, domain: app.domain, ...(access ? { access } : {}) };
        const context = new RunContext(
            server.app.config,
            data,
            () => Promise.resolve(knex),
            (message) => {
                if (message.type === 'event') post(message);
            },
        );
        const { undone, failed } = await undoFromJournal(context, {
            draft: async (sealed) => {
                const previous = JSON.parse(server.app.sealer.open(sealed, DRAFT_IN_JOURNAL)) as DraftInput;
                await apps(server).saveDraft(run.app, previous);
                return "put back the app's draft as it was before the run";
            },
        });
        if (failed.length > 0) {
            // The app is neither as it was nor as the run wanted: it says so until a run succeeds.
            await knex('dp_apps').where({ name: run.app }).update({ state: 'failed' });
            context.log(`The interrupted run was undone only in part: ${failed.length} change(s) could not be undone`, 'error');
        } else {
            context.log(`The interrupted run was undone: ${undone.length} change(s) put back`, 'warning');
        }
    };
}
