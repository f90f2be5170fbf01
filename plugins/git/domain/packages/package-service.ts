import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import Boom from '@hapi/boom';
import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { isUniqueViolation, now, toRfc3339, whereContains } from '../../../../lib/database.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { type ApiUser, toApiUser } from '../identity/format.ts';
import { registerOwnedThings, toUserRow, type UserRow } from '../identity/user-service.ts';
import { Service } from '../../../../lib/service.ts';

/** Gitea's package types, as the admin list filters them; only `generic` can be uploaded so far. */
export const PACKAGE_TYPES = [
    'alpine',
    'cargo',
    'chef',
    'composer',
    'conan',
    'conda',
    'container',
    'cran',
    'debian',
    'generic',
    'go',
    'helm',
    'maven',
    'npm',
    'nuget',
    'pub',
    'pypi',
    'rpm',
    'rubygems',
    'swift',
    'terraform',
    'vagrant',
] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

export const MAX_PACKAGE_FILE_BYTES = 1024 ** 3;

/** Indexed columns are at most 191 characters, so that utf8mb4 keys fit MySQL's limit. */
const MAX_NAME_LENGTH = 191;
const GENERIC_NAME = /^[-_+.\w]+$/;
const GENERIC_FILENAME = /^[-_+=:;.()[\]{}~!@#$%^& \w]+$/;
const HASH_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;

export interface PackageVersionRow {
    id: number;
    package_id: number;
    creator_id: number;
    version: string;
    lower_version: string;
    created_at: number;
}

export interface PackageBlobRow {
    id: number;
    size: number;
    hash_md5: string;
    hash_sha1: string;
    hash_sha256: string;
    hash_sha512: string;
    created_at: number;
}

export interface PackageFileRow {
    id: number;
    version_id: number;
    blob_id: number;
    name: string;
    lower_name: string;
    size: number;
    created_at: number;
}

/** One version of one package of one owner: what the registry's paths name. */
export interface PackageVersionRef {
    owner: UserRow;
    type: PackageType;
    name: string;
    version: string;
}

export interface StoredPackageFile {
    file: PackageFileRow;
    blob: PackageBlobRow;
    /** Where the content lies on disk. */
    path: string;
}

/** A package version as the admin list shows it, with its owner and creator loaded. */
export interface PackageEntry {
    id: number;
    type: string;
    name: string;
    lower_name: string;
    version: string;
    lower_version: string;
    created_at: number;
    owner: UserRow;
    creator: UserRow;
}

export interface PackageSearch {
    type?: string;
    q?: string;
}

export interface ApiPackage {
    id: number;
    owner: ApiUser;
    name: string;
    type: string;
    version: string;
    creator: ApiUser;
    created_at: string;
    html_url: string;
}

interface ReceivedContent {
    temporary: string;
    size: number;
    md5: string;
    sha1: string;
    sha256: string;
    sha512: string;
}

function numeric<T>(raw: Record<string, unknown>, columns: string[]): T {
    const row = { ...raw };
    for (const column of columns) {
        row[column] = Number(row[column]);
    }

    return row as T;
}

const toVersionRow = (raw: Record<string, unknown>) => numeric<PackageVersionRow>(raw, ['id', 'package_id', 'creator_id', 'created_at']);
const toBlobRow = (raw: Record<string, unknown>) => numeric<PackageBlobRow>(raw, ['id', 'size', 'created_at']);
const toFileRow = (raw: Record<string, unknown>) => numeric<PackageFileRow>(raw, ['id', 'version_id', 'blob_id', 'size', 'created_at']);

/** Gitea's stand-in for a user who no longer exists. */
export function ghostUser(): UserRow {
    return toUserRow({
        id: -1,
        lower_name: 'ghost',
        name: 'Ghost',
        full_name: 'Ghost',
        email: '',
        passwd_hash: '',
        must_change_password: false,
        login_source: 0,
        login_name: '',
        type: 0,
        location: '',
        website: '',
        description: '',
        language: '',
        visibility: 0,
        is_active: false,
        is_admin: false,
        is_restricted: false,
        prohibit_login: true,
        allow_git_hook: false,
        allow_import_local: false,
        allow_create_organization: false,
        max_repo_creation: 0,
        repo_admin_change_team_access: false,
        created_at: 0,
        updated_at: 0,
        last_login_at: 0,
    });
}

/** Gitea's generic registry: a name of word characters, dots, dashes and pluses, not one symbol alone. */
export function isValidGenericName(name: string): boolean {
    const loneSymbol = name.length === 1 && !/[\dA-Za-z]/.test(name);
    return GENERIC_NAME.test(name) && !loneSymbol && name !== '..' && name.length <= MAX_NAME_LENGTH;
}

/** Control characters (CR, LF, NUL...) would end up in headers, file names and logs; none is a version's. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** Gitea refuses a version with surrounding spaces; a slash cannot travel in a path, a control character anywhere. */
export function isValidVersion(version: string): boolean {
    const trimmed = version !== '' && version.trim() === version;
    return trimmed && !version.includes('/') && !CONTROL_CHARACTER.test(version) && version.length <= MAX_NAME_LENGTH;
}

export function isValidFilename(filename: string): boolean {
    const special = filename === '.' || filename === '..';
    return GENERIC_FILENAME.test(filename) && filename.trim() === filename && !special && filename.length <= MAX_NAME_LENGTH;
}

function checkGenericRef(ref: PackageVersionRef, filename?: string): void {
    if (!isValidGenericName(ref.name)) {
        throw new BadRequestError('invalid package name');
    }

    if (filename !== undefined && !isValidFilename(filename)) {
        throw new BadRequestError('invalid filename');
    }

    if (!isValidVersion(ref.version)) {
        throw new BadRequestError('invalid package version');
    }
}

/** Runs work one at a time per key: a blob's row and its file on disk change together. */
class KeyedLock {
    readonly #tails = new Map<string, Promise<void>>();

    async run<T>(key: string, work: () => Promise<T>): Promise<T> {
        const result = (this.#tails.get(key) ?? Promise.resolve()).then(work);
        const tail = result.then(
            () => undefined,
            () => undefined,
        );
        this.#tails.set(key, tail);
        void tail.then(() => {
            if (this.#tails.get(key) === tail) {
                this.#tails.delete(key);
            }
        });
        return await result;
    }
}

export class PackageService extends Service {
    readonly #blobLock = new KeyedLock();

    constructor(server: Server) {
        super(server);
    }
    get #root(): string {
        return this.server.app.config.packagesDir;
    }

    /** `<packagesDir>/<sha256[0:2]>/<sha256[2:4]>/<sha256>`, as Gitea lays its blobs out. */
    blobPath(sha256: string): string {
        return Path.join(this.#root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    }

    /** Stores one file of a generic package version, making the package and version as needed. */
    async upload(ref: PackageVersionRef, filename: string, content: Readable, creator: UserRow): Promise<StoredPackageFile> {
        checkGenericRef(ref, filename);
        const received = await this.#receive(content);
        try {
            const fileId = await this.#blobLock.run(received.sha256, () => this.#store(ref, filename, received, creator));
            return await this.#storedFile(fileId);
        } finally {
            await Fs.promises.rm(received.temporary, { force: true });
        }
    }

    /** Streams the body to a temporary file beside the blobs, hashing it on the way. */
    async #receive(content: Readable): Promise<ReceivedContent> {
        const directory = Path.join(this.#root, '.tmp');
        await Fs.promises.mkdir(directory, { recursive: true });
        const temporary = Path.join(directory, Crypto.randomUUID());
        const hashes = HASH_ALGORITHMS.map((algorithm) => Crypto.createHash(algorithm));
        let size = 0;
        const meter = new Transform({
            transform(chunk: Buffer, _encoding, done) {
                size += chunk.length;
                if (size > MAX_PACKAGE_FILE_BYTES) {
                    done(Boom.entityTooLarge('package file is too large'));
                    return;
                }

                hashes.forEach((hash) => hash.update(chunk));
                done(null, chunk);
            },
        });
        try {
            await pipeline(content, meter, Fs.createWriteStream(temporary, { flags: 'wx' }));
        } catch (error) {
            await Fs.promises.rm(temporary, { force: true });
            throw error;
        }

        const [md5, sha1, sha256, sha512] = hashes.map((hash) => hash.digest('hex')) as [string, string, string, string];
        return { temporary, size, md5, sha1, sha256, sha512 };
    }

    /** The blob goes on disk before its row exists, so no row ever names a missing file. */
    async #store(ref: PackageVersionRef, filename: string, received: ReceivedContent, creator: UserRow): Promise<number> {
        const blobExisted = Boolean(await this.knex('package_blobs').where({ hash_sha256: received.sha256 }).first('id'));
        await this.#placeBlob(received);
        try {
            return await this.knex.transaction(async (trx) => {
                const versionId = await this.#ensureVersion(trx, ref, creator);
                const blobId = await this.#ensureBlob(trx, received);
                return await this.#insertFile(trx, versionId, blobId, filename, received.size);
            });
        } catch (error) {
            if (!blobExisted) {
                await Fs.promises.rm(this.blobPath(received.sha256), { force: true });
            }

            throw error;
        }
    }

    async #placeBlob(received: ReceivedContent): Promise<void> {
        const target = this.blobPath(received.sha256);
        if (Fs.existsSync(target)) {
            return;
        }

        await Fs.promises.mkdir(Path.dirname(target), { recursive: true });
        await Fs.promises.rename(received.temporary, target);
    }

    async #ensureVersion(trx: Knex.Transaction, ref: PackageVersionRef, creator: UserRow): Promise<number> {
        const created = now();
        const lowerName = ref.name.toLowerCase();
        await trx('packages')
            .insert({ owner_id: ref.owner.id, type: ref.type, name: ref.name, lower_name: lowerName, created_at: created })
            .onConflict(['owner_id', 'type', 'lower_name'])
            .ignore();
        const packageRow = await trx('packages').where({ owner_id: ref.owner.id, type: ref.type, lower_name: lowerName }).first('id');
        const packageId = Number(packageRow.id);
        const lowerVersion = ref.version.toLowerCase();
        await trx('package_versions')
            .insert({
                package_id: packageId,
                creator_id: creator.id,
                version: ref.version,
                lower_version: lowerVersion,
                created_at: created,
            })
            .onConflict(['package_id', 'lower_version'])
            .ignore();
        const versionRow = await trx('package_versions').where({ package_id: packageId, lower_version: lowerVersion }).first('id');
        return Number(versionRow.id);
    }

    async #ensureBlob(trx: Knex.Transaction, received: ReceivedContent): Promise<number> {
        const { size, md5, sha1, sha256, sha512 } = received;
        await trx('package_blobs')
            .insert({ size, hash_md5: md5, hash_sha1: sha1, hash_sha256: sha256, hash_sha512: sha512, created_at: now() })
            .onConflict(['hash_sha256'])
            .ignore();
        const row = await trx('package_blobs').where({ hash_sha256: sha256 }).first('id');
        return Number(row.id);
    }

    async #insertFile(trx: Knex.Transaction, versionId: number, blobId: number, filename: string, size: number): Promise<number> {
        const lowerName = filename.toLowerCase();
        const duplicate = new ConflictError('package file already exists');
        if (await trx('package_files').where({ version_id: versionId, lower_name: lowerName }).first('id')) {
            throw duplicate;
        }

        try {
            const [id] = await trx('package_files').insert({
                version_id: versionId,
                blob_id: blobId,
                name: filename,
                lower_name: lowerName,
                size,
                created_at: now(),
            });
            return Number(id);
        } catch (error) {
            throw isUniqueViolation(error) ? duplicate : error;
        }
    }

    async #storedFile(fileId: number): Promise<StoredPackageFile> {
        const file = toFileRow(await this.knex('package_files').where({ id: fileId }).first());
        const blob = toBlobRow(await this.knex('package_blobs').where({ id: file.blob_id }).first());
        return { file, blob, path: this.blobPath(blob.hash_sha256) };
    }

    async #version(ref: PackageVersionRef): Promise<PackageVersionRow> {
        const raw = await this.knex('package_versions as v')
            .join('packages as p', 'p.id', 'v.package_id')
            .where({ 'p.owner_id': ref.owner.id, 'p.type': ref.type, 'p.lower_name': ref.name.toLowerCase() })
            .where('v.lower_version', ref.version.toLowerCase())
            .first('v.*');
        if (!raw) {
            throw new NotFoundError('package does not exist');
        }

        return toVersionRow(raw);
    }

    async #file(version: PackageVersionRow, filename: string): Promise<PackageFileRow> {
        const raw = await this.knex('package_files').where({ version_id: version.id, lower_name: filename.toLowerCase() }).first();
        if (!raw) {
            throw new NotFoundError('package file does not exist');
        }

        return toFileRow(raw);
    }

    /** One file of a version, for download. */
    async file(ref: PackageVersionRef, filename: string): Promise<StoredPackageFile> {
        checkGenericRef(ref, filename);
        const file = await this.#file(await this.#version(ref), filename);
        return await this.#storedFile(file.id);
    }

    /** Deletes one file; the version goes with its last file, the package with its last version. */
    async deleteFile(ref: PackageVersionRef, filename: string): Promise<void> {
        checkGenericRef(ref, filename);
        const version = await this.#version(ref);
        const file = await this.#file(version, filename);
        await this.knex.transaction(async (trx) => {
            await trx('package_files').where({ id: file.id }).delete();
            const remaining = await trx('package_files').where({ version_id: version.id }).first('id');
            if (!remaining) {
                await this.#deleteVersionRow(trx, version);
            }
        });
        await this.#collectBlobs([file.blob_id]);
    }

    /** Deletes a version with all its files. */
    async deleteVersion(ref: PackageVersionRef): Promise<void> {
        checkGenericRef(ref);
        const version = await this.#version(ref);
        const blobIds = await this.knex('package_files').where({ version_id: version.id }).pluck('blob_id');
        await this.knex.transaction(async (trx) => {
            await this.#deleteVersionRow(trx, version);
        });
        await this.#collectBlobs(blobIds.map(Number));
    }

    async #deleteVersionRow(trx: Knex.Transaction, version: PackageVersionRow): Promise<void> {
        await trx('package_versions').where({ id: version.id }).delete();
        const otherVersion = await trx('package_versions').where({ package_id: version.package_id }).first('id');
        if (!otherVersion) {
            await trx('packages').where({ id: version.package_id }).delete();
        }
    }

    async #collectBlobs(blobIds: number[]): Promise<void> {
        const hashes = await this.knex('package_blobs')
            .whereIn('id', [...new Set(blobIds)])
            .pluck('hash_sha256');
        await this.collectBlobsByHash(hashes.map(String));
    }

    /** Removes the blobs no file points at any more, rows and files on disk. */
    async collectBlobsByHash(hashes: string[]): Promise<void> {
        for (const hash of new Set(hashes)) {
            await this.#blobLock.run(hash, async () => {
                const removed = await this.knex('package_blobs')
                    .where({ hash_sha256: hash })
                    .whereNotExists((files) =>
                        files.select('id').from('package_files').whereRaw('package_files.blob_id = package_blobs.id'),
                    )
                    .delete();
                if (removed > 0) {
                    await Fs.promises.rm(this.blobPath(hash), { force: true });
                }
            });
        }
    }

    /** Package versions of every owner, newest first; `q` matches a part of the name, in any case. */
    async search(filters: PackageSearch, paging: Paging): Promise<{ rows: PackageEntry[]; total: number }> {
        const query = this.knex('package_versions as v').join('packages as p', 'p.id', 'v.package_id');
        if (filters.type) {
            query.where('p.type', filters.type);
        }

        if (filters.q) {
            whereContains(query, ['p.lower_name'], filters.q);
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = (await query
            .select(
                'v.id',
                'v.version',
                'v.lower_version',
                'v.created_at',
                'v.creator_id',
                'p.owner_id',
                'p.type',
                'p.name',
                'p.lower_name',
            )
            .orderBy('v.created_at', 'desc')
            .orderBy('v.id', 'desc')
            .limit(paging.limit)
            .offset(paging.offset)) as Array<Record<string, unknown>>;
        return { rows: await this.#withUsers(rows), total };
    }

    async #withUsers(rows: Array<Record<string, unknown>>): Promise<PackageEntry[]> {
        const ids = [...new Set(rows.flatMap((row) => [Number(row.owner_id), Number(row.creator_id)]))];
        const found = await this.knex('users').whereIn('id', ids);
        const byId = new Map(found.map((raw: Record<string, unknown>) => [Number(raw.id), toUserRow(raw)]));
        return rows.map((row) => ({
            id: Number(row.id),
            type: String(row.type),
            name: String(row.name),
            lower_name: String(row.lower_name),
            version: String(row.version),
            lower_version: String(row.lower_version),
            created_at: Number(row.created_at),
            owner: byId.get(Number(row.owner_id)) ?? ghostUser(),
            creator: byId.get(Number(row.creator_id)) ?? ghostUser(),
        }));
    }
}

/** Gitea's Package: one version of a package, linked to its page. */
export function toApiPackage(entry: PackageEntry, viewer: UserRow | undefined, publicUrl: string): ApiPackage {
    const path = [entry.owner.name, '-', 'packages', entry.type, entry.lower_name, entry.lower_version].map(encodeURIComponent).join('/');
    return {
        id: entry.id,
        owner: toApiUser(entry.owner, viewer, publicUrl),
        name: entry.name,
        type: entry.type,
        version: entry.version,
        creator: toApiUser(entry.creator, viewer, publicUrl),
        created_at: toRfc3339(entry.created_at),
        html_url: `${publicUrl}${path}`,
    };
}

async function countOwnedPackages(ownerId: number, server: Server): Promise<number> {
    const row = await server.app.knex('packages').where({ owner_id: ownerId }).count({ count: '*' }).first();
    return Number(row?.count ?? 0);
}

/** Deletes the owner's packages inside the user's deletion; the blobs no longer used go once it commits. */
async function purgeOwnedPackages(owner: UserRow, trx: Knex.Transaction, server: Server): Promise<(() => Promise<void>) | void> {
    // Inside the transaction: on SQLite a second connection would wait for this one.
    if (!(await trx('packages').where({ owner_id: owner.id }).first('id'))) {
        return;
    }

    const packageService = packages(server);

    const hashes = await trx('package_files as f')
        .join('package_versions as v', 'v.id', 'f.version_id')
        .join('packages as p', 'p.id', 'v.package_id')
        .join('package_blobs as b', 'b.id', 'f.blob_id')
        .where('p.owner_id', owner.id)
        .distinct()
        .pluck('b.hash_sha256');
    await trx('packages').where({ owner_id: owner.id }).delete();
    return async () => await packageService.collectBlobsByHash(hashes.map(String));
}

registerOwnedThings({ name: 'packages', count: countOwnedPackages, purge: purgeOwnedPackages });

export const packages = defineService<PackageService>('packages', (owner) => new PackageService(owner));
