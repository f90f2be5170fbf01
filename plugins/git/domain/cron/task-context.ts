/** What a cron task works with in its Bree worker: its own database connection and the configuration, nothing else. */
import Path from 'node:path';

import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';

export interface TaskContext {
    knex: Knex;
    config: Config;
    /** Records a system notice, as Gitea does for a repository that fails its check. */
    notice(type: NoticeType, description: string): Promise<void>;
}

export const NOTICE = { repository: 1, task: 2 } as const;
export type NoticeType = (typeof NOTICE)[keyof typeof NOTICE];

export interface CronTaskDefinition {
    name: string;
    enabled: boolean;
    schedule: string;
    runAtStart: boolean;
    /** Does the work; the returned text is recorded with the execution. */
    run(context: TaskContext): Promise<string>;
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface RepositoryOnDisk {
    id: number;
    fullName: string;
    directory: string;
    defaultBranch: string;
    objectFormat: string;
}

export async function repositoriesOnDisk(context: TaskContext): Promise<RepositoryOnDisk[]> {
    const rows = await context
        .knex('repositories')
        .orderBy('id')
        .select('id', 'owner_name', 'name', 'lower_name', 'default_branch', 'object_format_name');
    return rows.map((row: Record<string, unknown>) => ({
        id: Number(row.id),
        fullName: `${String(row.owner_name)}/${String(row.name)}`,
        directory: Path.join(context.config.repositoriesDir, String(row.owner_name).toLowerCase(), `${String(row.lower_name)}.git`),
        defaultBranch: String(row.default_branch),
        objectFormat: String(row.object_format_name),
    }));
}

export function reason(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}
