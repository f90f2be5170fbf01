import type { Knex } from 'knex';

import { defineService } from '../../../../lib/services.ts';
import type { IssueRow } from './format.ts';
import type { RepositoryAccess } from './issue-service.ts';

/** An issue opened, closed or reopened, or commented on (`commentId`), by the user `actorId`. */
export interface IssueActivity {
    access: RepositoryAccess;
    issue: IssueRow;
    actorId: number;
    commentId?: number;
}

/** Runs inside the transaction that records the activity. */
export type IssueActivityListener = (trx: Knex.Transaction, activity: IssueActivity) => Promise<void>;

/** Who hears of a server's issue activity; the issue service calls them and knows nothing of what listens. */
export class IssueEvents {
    readonly #listeners = new Map<string, IssueActivityListener>();

    listen(name: string, listener: IssueActivityListener): void {
        this.#listeners.set(name, listener);
    }

    async activity(trx: Knex.Transaction, activity: IssueActivity): Promise<void> {
        for (const listener of this.#listeners.values()) {
            await listener(trx, activity);
        }
    }
}

export const issueEvents = defineService('issue-events', () => new IssueEvents());
