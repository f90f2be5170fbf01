/** Gitea's cron tasks on the bare repositories under the repositories root and their records. */
import Fs from 'node:fs';

import { directorySize } from '../../../../lib/files.ts';
import { withTimeout } from '../../../../lib/timeout.ts';
import { initBareRepository, runGit } from '../repositories/git.ts';
import { NOTICE, reason, repositoriesOnDisk, type RepositoryOnDisk, type TaskContext } from './task-context.ts';

const GIT_TIMEOUT_MS = 60_000;

const names = (repos: RepositoryOnDisk[]) => (repos.length ? `: ${repos.map((repo) => repo.fullName).join(', ')}` : '');

/** `git fsck` on every repository; each failure becomes a repository notice. */
export async function repoHealthCheck(context: TaskContext): Promise<string> {
    const failed: RepositoryOnDisk[] = [];
    const repos = await repositoriesOnDisk(context);
    for (const repo of repos) {
        try {
            if (!Fs.existsSync(repo.directory)) {
                throw new Error(`${repo.directory} does not exist`);
            }

            await withTimeout(runGit(['fsck', '--no-progress'], { gitDir: repo.directory }), GIT_TIMEOUT_MS, 'git fsck');
        } catch (error) {
            failed.push(repo);
            await context.notice(NOTICE.repository, `Failed to health check repository (${repo.fullName}): ${reason(error)}`);
        }
    }

    return `checked ${repos.length} repositories, ${failed.length} failed${names(failed)}`;
}

/** Recounts what the records say about the disk: size and emptiness. */
export async function checkRepoStats(context: TaskContext): Promise<string> {
    let corrected = 0;
    for (const repo of await repositoriesOnDisk(context)) {
        if (!Fs.existsSync(repo.directory)) {
            continue;
        }

        const refs = await runGit(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], { gitDir: repo.directory });
        const facts = { size: await directorySize(repo.directory), is_empty: refs.trim() === '' };
        const current = await context.knex('repositories').where({ id: repo.id }).first('size', 'is_empty');
        if (current && (Number(current.size) !== facts.size || Boolean(current.is_empty) !== facts.is_empty)) {
            await context.knex('repositories').where({ id: repo.id }).update(facts);
            corrected += 1;
        }
    }

    return `corrected the statistics of ${corrected} repositories`;
}

export async function gitGcRepos(context: TaskContext): Promise<string> {
    const failed: RepositoryOnDisk[] = [];
    const repos = (await repositoriesOnDisk(context)).filter((repo) => Fs.existsSync(repo.directory));
    for (const repo of repos) {
        try {
            await withTimeout(runGit(['gc', '--quiet'], { gitDir: repo.directory }), GIT_TIMEOUT_MS, 'git gc');
            await context
                .knex('repositories')
                .where({ id: repo.id })
                .update({ size: await directorySize(repo.directory) });
        } catch (error) {
            failed.push(repo);
            await context.notice(NOTICE.repository, `Repository garbage collection failed for ${repo.fullName}: ${reason(error)}`);
        }
    }

    if (failed.length > 0) {
        throw new Error(`git gc failed for ${failed.map((repo) => repo.fullName).join(', ')}`);
    }

    return `garbage-collected ${repos.length} repositories`;
}

const missingOnDisk = async (context: TaskContext) => (await repositoriesOnDisk(context)).filter((repo) => !Fs.existsSync(repo.directory));

/** A fresh, empty bare repository where a record's files are gone, on its default branch and object format. */
export async function reinitMissingRepos(context: TaskContext): Promise<string> {
    const reinitialized: RepositoryOnDisk[] = [];
    for (const repo of await missingOnDisk(context)) {
        try {
            await initBareRepository(repo.directory, repo.defaultBranch, repo.objectFormat);
            await context
                .knex('repositories')
                .where({ id: repo.id })
                .update({ is_empty: true, size: await directorySize(repo.directory) });
            reinitialized.push(repo);
        } catch (error) {
            await context.notice(NOTICE.repository, `InitRepository [${repo.id}]: ${reason(error)}`);
        }
    }

    return `reinitialized ${reinitialized.length} repositories without files${names(reinitialized)}`;
}

export async function deleteMissingRepos(context: TaskContext): Promise<string> {
    const missing = await missingOnDisk(context);
    for (const repo of missing) {
        await context.knex('repositories').where({ id: repo.id }).delete();
    }

    return `deleted ${missing.length} repository records without files${names(missing)}`;
}
