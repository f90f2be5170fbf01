import Fs from 'node:fs';
import Path from 'node:path';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { NotFoundError } from '../../../../lib/errors.ts';
import { directorySize } from '../../../../lib/files.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { repositoryNameProblem } from '../identity/names.ts';
import { users, type UserRow } from '../identity/user-service.ts';
import { byteOrder, inspectRepository, runGit } from './git.ts';
import { globToRegExp } from './globs.ts';
import { checkRepositoryName, repositories, type RepositoryRow, toRepositoryRow } from './repository-service.ts';
import { Service } from '../../../../lib/service.ts';

/** `owner` or `owner/repo`, split once at the first slash; an empty side matches everything. */
function unadoptedMatchers(query: string): { owner: RegExp; repo: RegExp } {
    const slash = query.indexOf('/');
    const ownerGlob = slash < 0 ? query : query.slice(0, slash);
    const repoGlob = slash < 0 ? '' : query.slice(slash + 1);
    return { owner: globToRegExp(ownerGlob || '*'), repo: globToRegExp(repoGlob || '*') };
}

function sortedDirectories(directory: string): string[] {
    if (!Fs.existsSync(directory)) {
        return [];
    }

    return Fs.readdirSync(directory, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort(byteOrder);
}

function isPlainDirectory(path: string): boolean {
    try {
        return Fs.lstatSync(path).isDirectory();
    } catch {
        return false;
    }
}

/** Unadopted repositories: bare directories under the root whose owner exists but which have no record. */
export class UnadoptedRepositoryService extends Service {
    get #root(): string {
        return this.server.app.config.repositoriesDir;
    }

    async list(query: string, paging: Paging): Promise<{ names: string[]; total: number }> {
        const matchers = unadoptedMatchers(query);
        const found: string[] = [];
        for (const ownerName of sortedDirectories(this.#root)) {
            if (ownerName !== ownerName.toLowerCase() || !matchers.owner.test(ownerName)) {
                continue;
            }

            found.push(...(await this.#unadoptedOf(ownerName, matchers.repo)));
        }

        return { names: found.slice(paging.offset, paging.offset + paging.limit), total: found.length };
    }

    async #unadoptedOf(ownerName: string, repoMatcher: RegExp): Promise<string[]> {
        const candidates = sortedDirectories(Path.join(this.#root, ownerName))
            .filter((entry) => entry.endsWith('.git'))
            .map((entry) => entry.slice(0, -'.git'.length))
            .filter((name) => !repositoryNameProblem(name) && name === name.toLowerCase() && repoMatcher.test(name));
        if (candidates.length === 0) {
            return [];
        }

        const owner = await users(this.server).byName(ownerName);
        if (!owner) {
            return [];
        }

        const recorded = new Set(await this.knex('repositories').where({ owner_id: owner.id }).pluck('lower_name'));
        return candidates.filter((name) => !recorded.has(name)).map((name) => `${ownerName}/${name}`);
    }

    /** The owner and directory of an unadopted repository, or 404. */
    async #unadopted(ownerName: string, repoName: string): Promise<{ owner: UserRow; directory: string }> {
        const owner = await users(this.server).byName(ownerName);
        if (!owner) {
            throw new NotFoundError();
        }

        checkRepositoryName(repoName);
        const service = repositories(this.server);
        const directory = service.repositoryPath(owner.lower_name, repoName);
        if ((await service.byName(owner, repoName)) || !isPlainDirectory(directory)) {
            throw new NotFoundError();
        }

        return { owner, directory };
    }

    /** Makes a record for a repository found on disk: private, its default branch and size read from disk. */
    async adopt(ownerName: string, repoName: string): Promise<RepositoryRow> {
        const { owner, directory } = await this.#unadopted(ownerName, repoName);
        const facts = await inspectRepository(directory);
        const size = await directorySize(directory);
        try {
            return await this.knex.transaction(async (trx) => {
                const created = now();
                const [id] = await trx('repositories').insert({
                    owner_id: owner.id,
                    owner_name: owner.name,
                    lower_name: repoName.toLowerCase(),
                    name: repoName,
                    is_private: true,
                    is_empty: facts.isEmpty,
                    default_branch: facts.defaultBranch,
                    object_format_name: facts.objectFormat,
                    size,
                    created_at: created,
                    updated_at: created,
                });
                if (facts.headNeedsMoving) {
                    await runGit(['symbolic-ref', 'HEAD', `refs/heads/${facts.defaultBranch}`], { gitDir: directory });
                }

                return toRepositoryRow(await trx('repositories').where({ id }).first());
            });
        } catch (error) {
            throw isUniqueViolation(error) ? new NotFoundError() : error;
        }
    }

    async delete(ownerName: string, repoName: string): Promise<void> {
        const { directory } = await this.#unadopted(ownerName, repoName);
        await Fs.promises.rm(directory, { recursive: true, force: true });
    }
}

export const unadoptedRepositories = defineService<UnadoptedRepositoryService>(
    'unadoptedRepositories',
    (owner) => new UnadoptedRepositoryService(owner),
);
