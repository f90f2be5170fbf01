/** One backup or restore run of an app (plugins/deploy/domain/backups/backup-runs.ts). */
import { backupRun, type BackupRunData, restoreRun } from '../plugins/deploy/domain/backups/backup-runs.ts';
import type { AppRunData } from '../plugins/deploy/domain/engine/run-context.ts';
import { executeAppRun } from '../plugins/deploy/domain/engine/run-worker.ts';
import { done, jobData } from '../lib/worker.ts';

const data = jobData<Omit<AppRunData, 'kind'> & BackupRunData & { backupKind: 'backup' | 'restore' }>();

// The app's paths, logger and engine as every app run has them; it stops and starts containers as an action does.
await executeAppRun({ ...data, kind: 'action' }, (context) =>
    data.backupKind === 'restore' ? restoreRun(context, data) : backupRun(context, data),
);
done();
