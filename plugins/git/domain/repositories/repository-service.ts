import Fs from 'node:fs';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { directorySize } from '../../../../lib/files.ts';
import { defineService } from '../../../../lib/services.ts';
import { repositoryNameProblem } from '../identity/names.ts';
import { onUserRename, registerOwnedThings, type UserRow } from '../identity/user-service.ts';
import { repositoryEvents } from './repository-events.ts';
import { DEFAULT_BRANCH, type InitialFile, initBareRepository, isValidBranchName, type Signature, writeInitialCommit } from './git.ts';
import { templates } from '../templates/templates-service.ts';
import { Service } from '../../../../lib/service.ts';

const README_TEMPLATES = ['Default'];
const MAX_DESCRIPTION_LENGTH = 2048;

export interface RepositoryRow {
    id: number;
    owner_id: number;
    owner_name: string;
    lower_name: string;
    name: string;
    description: string;
    website: string;
    is_private: boolean;
    is_empty: boolean;
    is_template: boolean;
    is_archived: boolean;
    default_branch: string;
    /** Bytes on disk; the API shows KiB. */
    size: number;
    object_format_name: string;
    created_at: number;
    updated_at: number;
}

/** Gitea's CreateRepoOption. */
export interface CreateRepositoryInput {
    name: string;
    description?: string;
    private?: boolean;
    template?: boolean;
    auto_init?: boolean;
    default_branch?: string;
    gitignores?: string;
    license?: string;
    readme?: string;
    issue_labels?: string;
    object_format_name?: string;
    trust_model?: string;
}

const BOOLEAN_COLUMNS = ['is_private', 'is_empty', 'is_template', 'is_archived'] as const;
const NUMBER_COLUMNS = ['id', 'owner_id', 'size', 'created_at', 'updated_at'] as const;

export function toRepositoryRow(raw: Record<string, unknown>): RepositoryRow {
    const row = { ...raw };
    for (const column of BOOLEAN_COLUMNS) {
        row[column] = Boolean(row[column]);
    }

    for (const column of NUMBER_COLUMNS) {
        row[column] = Number(row[column]);
    }

    return row as unknown as RepositoryRow;
}

async function countOwnedRepositories(ownerId: number, server: Server): Promise<number> {
    const row = await server.app.knex('repositories').where({ owner_id: ownerId }).count({ count: '*' }).first();
    return Number(row?.count ?? 0);
}

async function purgeOwnedRepositories(owner: UserRow, trx: Knex.Transaction, server: Server): Promise<() => Promise<void>> {
    const announceDeleted = await repositoryEvents.deletingOwned(server, owner, trx);
    await trx('repositories').where({ owner_id: owner.id }).delete();
    const ownerDir = Path.join(server.app.config.repositoriesDir, owner.lower_name);
    return async () => {
        await Fs.promises.rm(ownerDir, { recursive: true, force: true });
        await announceDeleted();
    };
}

/** Records follow inside the rename's transaction; the owner's folder moves once it has committed. */
async function followOwnerRename(
    user: UserRow,
    newName: string,
    trx: Knex.Transaction,
    server: Server,
): Promise<(() => Promise<void>) | void> {
    await trx('repositories').where({ owner_id: user.id }).update({ owner_name: newName });
    const newLower = newName.toLowerCase();
    const root = server.app.config.repositoriesDir;
    const from = Path.join(root, user.lower_name);
    const to = Path.join(root, newLower);
    if (newLower === user.lower_name || !Fs.existsSync(from)) {
        return;
    }

    if (Fs.existsSync(to)) {
        throw new ValidationError(`user directory already exists [name: ${newName}]`);
    }

    return async () => await Fs.promises.rename(from, to);
}

registerOwnedThings({ name: 'repositories', count: countOwnedRepositories, purge: purgeOwnedRepositories });
onUserRename(followOwnerRename);

// ---------------------------------------------------------------------------------------------------------------

interface CreationPlan {
    name: string;
    defaultBranch: string;
    objectFormat: string;
    /** The first commit's files when auto_init is asked for. */
    files?: InitialFile[];
}

function sameNameConflict(): ConflictError {
    return new ConflictError('The repository with the same name already exists.');
}

function signatureOf(doer: UserRow): Signature {
    return { name: doer.full_name || doer.name, email: doer.email || `${doer.lower_name}@noreply.localhost` };
}

/** Fills the usual copyright placeholders of licence texts, as Gitea does. */
function fillLicense(text: string, owner: UserRow): string {
    const year = String(new Date().getUTCFullYear());
    return text
        .replace(/<year>|\[year\]|\[yyyy\]|\{year\}|<yyyy>/g, year)
        .replace(
            /<copyright holders>|<name of author>|<owner>|\[fullname\]|\[name of copyright owner\]|\{owner\}/g,
            owner.full_name || owner.name,
        );
}

export class RepositoryService extends Service {
    get #root(): string {
        return this.server.app.config.repositoriesDir;
    }

    /** `<root>/<owner>/<repo>.git`; both names must already be safe single path segments. */
    repositoryPath(ownerLowerName: string, repoName: string): string {
        const segments = [ownerLowerName, repoName];
        if (segments.some((segment) => !/^[-.\w]+$/.test(segment) || segment === '.' || segment === '..')) {
            throw new ValidationError(`invalid repository path [${ownerLowerName}/${repoName}]`);
        }

        const path = Path.join(this.#root, ownerLowerName, `${repoName.toLowerCase()}.git`);
        const relative = Path.relative(this.#root, path);
        if (relative.startsWith('..') || Path.isAbsolute(relative)) {
            throw new ValidationError(`invalid repository path [${ownerLowerName}/${repoName}]`);
        }

        return path;
    }

    async byName(owner: UserRow, name: string, knex: Knex = this.knex): Promise<RepositoryRow | undefined> {
        const raw = await knex('repositories').where({ owner_id: owner.id, lower_name: name.toLowerCase() }).first();
        return raw ? toRepositoryRow(raw) : undefined;
    }

    async create(owner: UserRow, input: CreateRepositoryInput, doer: UserRow): Promise<RepositoryRow> {
        this.#checkReadme(input);
        checkRepositoryName(input.name);
        if ((input.description ?? '').length > MAX_DESCRIPTION_LENGTH) {
            throw new ValidationError('[Description]: MaxSize');
        }

        const defaultBranch = input.default_branch || DEFAULT_BRANCH;
        if (!isValidBranchName(defaultBranch)) {
            throw new ValidationError(`invalid default branch name [name: ${defaultBranch}]`);
        }

        if (await this.byName(owner, input.name)) {
            throw sameNameConflict();
        }

        await this.#checkRepositoryLimit(owner, doer);
        const plan: CreationPlan = { name: input.name, defaultBranch, objectFormat: input.object_format_name || 'sha1' };
        if (input.auto_init) {
            plan.files = this.#initialFiles(owner, input);
        }

        const repository = await this.#createOnDisk(owner, input, plan, doer);
        await repositoryEvents.created(this.server, repository, owner, doer);
        return repository;
    }

    async #createOnDisk(owner: UserRow, input: CreateRepositoryInput, plan: CreationPlan, doer: UserRow): Promise<RepositoryRow> {
        const directory = this.repositoryPath(owner.lower_name, plan.name);
        let claimed = false;
        try {
            return await this.knex.transaction(async (trx) => {
                const id = await this.#insertRecord(trx, owner, input, plan);
                claimDirectory(directory, owner, plan.name);
                claimed = true;
                await initBareRepository(directory, plan.defaultBranch, plan.objectFormat);
                if (plan.files) {
                    await writeInitialCommit(directory, plan.defaultBranch, plan.files, signatureOf(doer));
                }

                await trx('repositories')
                    .where({ id })
                    .update({ size: await directorySize(directory) });
                return toRepositoryRow(await trx('repositories').where({ id }).first());
            });
        } catch (error) {
            if (claimed) {
                await Fs.promises.rm(directory, { recursive: true, force: true });
            }

            throw isUniqueViolation(error) ? sameNameConflict() : error;
        }
    }

    async #insertRecord(trx: Knex.Transaction, owner: UserRow, input: CreateRepositoryInput, plan: CreationPlan): Promise<number> {
        const created = now();
        const [id] = await trx('repositories').insert({
            owner_id: owner.id,
            owner_name: owner.name,
            lower_name: plan.name.toLowerCase(),
            name: plan.name,
            description: input.description ?? '',
            is_private: input.private ?? false,
            is_template: input.template ?? false,
            is_empty: !plan.files,
            default_branch: plan.defaultBranch,
            object_format_name: plan.objectFormat,
            created_at: created,
            updated_at: created,
        });
        return Number(id);
    }

    /** Gitea offers one readme template, and refuses any other with 400 before anything else. */
    #checkReadme(input: CreateRepositoryInput): void {
        const readme = input.readme || 'Default';
        if (input.auto_init && !README_TEMPLATES.includes(readme)) {
            throw new BadRequestError(`readme template does not exist, available templates: [${README_TEMPLATES.join(' ')}]`);
        }
    }

    async #checkRepositoryLimit(owner: UserRow, doer: UserRow): Promise<void> {
        if (doer.is_admin || owner.max_repo_creation < 0) {
            return;
        }

        if ((await countOwnedRepositories(owner.id, this.server)) >= owner.max_repo_creation) {
            throw new ForbiddenError(`user has reached maximum limit of repositories [limit: ${owner.max_repo_creation}]`);
        }
    }

    #initialFiles(owner: UserRow, input: CreateRepositoryInput): InitialFile[] {
        const files: InitialFile[] = [{ name: 'README.md', content: `# ${input.name}\n\n${input.description ?? ''}\n` }];
        const gitignore = this.#gitignoreContent(input.gitignores ?? '');
        if (gitignore) {
            files.push({ name: '.gitignore', content: gitignore });
        }

        if (input.license) {
            files.push({ name: 'LICENSE', content: fillLicense(this.#templateText('license', input.license), owner) });
        }

        if (input.issue_labels) {
            this.#templateText('label', input.issue_labels);
        }

        return files;
    }

    #gitignoreContent(names: string): string {
        const templates = names
            .split(',')
            .map((name) => name.trim())
            .filter((name) => name !== '');
        return templates.map((name) => `# ---> ${name}\n${this.#templateText('gitignore', name)}\n`).join('');
    }

    #templateText(kind: 'gitignore' | 'license' | 'label', name: string): string {
        const bundled = templates(this.server);
        try {
            if (kind === 'gitignore') {
                return bundled.gitignore(name).source;
            }

            if (kind === 'license') {
                return bundled.license(name).body;
            }

            bundled.labelSet(name);
            return '';
        } catch (error) {
            if (error instanceof NotFoundError) {
                const message =
                    kind === 'label'
                        ? `failed to load label template file "${name}": not found`
                        : `${kind} template does not exist [name: ${name}]`;
                throw new ValidationError(message);
            }

            throw error;
        }
    }
}

export function checkRepositoryName(name: string): void {
    const problem = repositoryNameProblem(name);
    if (problem) {
        throw new ValidationError(problem.message);
    }
}

/** Creating the directory itself (not its parents) claims it: files already there are never taken over. */
function claimDirectory(directory: string, owner: UserRow, name: string): void {
    Fs.mkdirSync(Path.dirname(directory), { recursive: true });
    try {
        Fs.mkdirSync(directory);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            throw new ConflictError(`repository files already exist [uname: ${owner.name}, name: ${name}]`);
        }

        throw error;
    }
}

export const repositories = defineService<RepositoryService>('repositories', (owner) => new RepositoryService(owner));
