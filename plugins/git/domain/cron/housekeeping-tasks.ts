/** Gitea's cron tasks that prune records: webhook deliveries, package blobs, inactive accounts, system notices. */
import Fs from 'node:fs';
import Path from 'node:path';

import { DAY, HOUR, type TaskContext } from './task-context.ts';

/** Gitea's default cleanup type, OlderThan: deliveries that ended more than 168 hours ago. */
const HOOK_DELIVERY_AGE_MS = 168 * HOUR;

export async function cleanupHookTaskTable(context: TaskContext): Promise<string> {
    const deleted = await context
        .knex('hook_tasks')
        .where({ is_delivered: true })
        .where('delivered_at', '<', Date.now() - HOOK_DELIVERY_AGE_MS)
        .delete();
    return `deleted ${deleted} webhook deliveries older than 7 days`;
}

/** Blobs no package file points at any more (left by an interrupted upload or delete), a day after they were made. */
export async function cleanupPackages(context: TaskContext): Promise<string> {
    const orphans = await context
        .knex('package_blobs')
        .whereNotExists(context.knex('package_files').whereRaw('package_files.blob_id = package_blobs.id'))
        .where('created_at', '<', Date.now() - DAY)
        .select('id', 'hash_sha256');
    for (const blob of orphans) {
        const sha = String(blob.hash_sha256);
        await context.knex('package_blobs').where({ id: blob.id }).delete();
        await Fs.promises.rm(Path.join(context.config.packagesDir, sha.slice(0, 2), sha.slice(2, 4), sha), { force: true });
    }

    return `removed ${orphans.length} unreferenced package blobs`;
}

/** Never-activated individual accounts older than the activation window, if they own and belong to nothing. */
export async function deleteInactiveAccounts(context: TaskContext): Promise<string> {
    const { knex } = context;
    const owns = (table: string, column: string) => knex(table).whereRaw(`${table}.${column} = users.id`);
    const deleted = await knex('users')
        .where({ type: 0, is_active: false })
        .where('created_at', '<', Date.now() - context.config.activeCodeLiveMinutes * 60_000)
        .whereNotExists(owns('repositories', 'owner_id'))
        .whereNotExists(owns('packages', 'owner_id'))
        .whereNotExists(owns('org_users', 'uid'))
        .delete();
    return `deleted ${deleted} inactive accounts`;
}

export async function deleteOldSystemNotices(context: TaskContext): Promise<string> {
    const deleted = await context
        .knex('system_notices')
        .where('created_at', '<', Date.now() - 365 * DAY)
        .delete();
    return `deleted ${deleted} system notices older than a year`;
}
