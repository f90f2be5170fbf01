/**
 * How runs that change an app take a backup first (BACKUP_BEFORE_CHANGES), as the backups set it at start
 * (backups/setup.ts). Kept apart from the lifecycle service, so that setting it does not load the service and all it
 * reaches; the lifecycle reads it when a run asks for a backup.
 */
import type { Server } from '@hapi/hapi';

import type { AppRecord } from '../apps/app-service.ts';
import type { BackupFirst } from '../engine/run-context.ts';

/** Makes the backup a run takes first, or none (the app has nothing deployed to back up). */
export type BackupFirstMaker = (app: AppRecord, reason: string) => Promise<BackupFirst | undefined>;

// Keyed by server.app, as the services are (lib/services.ts).
const makers = new WeakMap<object, BackupFirstMaker>();

export function takeBackupsFirstWith(server: Server, maker: BackupFirstMaker): void {
    makers.set(server.app, maker);
}

export function backupFirstMaker(server: Server): BackupFirstMaker | undefined {
    return makers.get(server.app);
}
