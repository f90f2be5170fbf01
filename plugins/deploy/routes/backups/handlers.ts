import type { Lifecycle, Request } from '@hapi/hapi';

import { backupSchedules } from '../../domain/backups/backup-schedules.ts';
import { backups } from '../../domain/backups/backup-service.ts';
import { requireDeployCredentials } from '../../security.ts';

interface BackupParams {
    name?: string;
    id?: number;
}

function paramsOf(request: Request): { name: string; id: number } {
    const { name, id } = request.params as BackupParams;
    return { name: String(name), id: Number(id) };
}

export const listBackups: Lifecycle.Method = async (request) => ({ backups: await backups(request.server).list(paramsOf(request).name) });

export const createBackup: Lifecycle.Method = async (request, h) => {
    const runId = await backups(request.server).start(paramsOf(request).name, requireDeployCredentials(request).user);
    return h.response({ runId }).code(202);
};

export const restoreBackup: Lifecycle.Method = async (request, h) => {
    const { name, id } = paramsOf(request);
    const runId = await backups(request.server).restore(name, id, requireDeployCredentials(request).user);
    return h.response({ runId }).code(202);
};

export const deleteBackup: Lifecycle.Method = async (request, h) => {
    const { name, id } = paramsOf(request);
    await backups(request.server).remove(name, id, requireDeployCredentials(request).user);
    return h.response().code(204);
};

export const getBackupSchedule: Lifecycle.Method = async (request) => await backupSchedules(request.server).of(paramsOf(request).name);

export const setBackupSchedule: Lifecycle.Method = async (request) => {
    const { schedule } = request.payload as { schedule: string | null };
    return await backupSchedules(request.server).set(paramsOf(request).name, schedule, requireDeployCredentials(request).user);
};
