import type { Readable } from 'node:stream';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { isUniqueViolation, now, whereContains } from '../../../../lib/database.ts';
import { ConflictError, NotFoundError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { Service } from '../../../../lib/service.ts';
import { defineService } from '../../../../lib/services.ts';
import { registerOwnedThings, toUserRow, type UserRow } from '../identity/user-service.ts';
import { ensureBlobRow, packageBlobs, type PackageBlobService, type ReceivedContent } from './package-blobs.ts';
import { checkGenericRef, type PackageVersionRef } from './package-names.ts';
import {
    type PackageEntry,
    type PackageFileRow,
    type PackageVersionRow,
    type StoredPackageFile,
    toBlobRow,
    toFileRow,
    toPackageEntry,
    toVersionRow,
} from './package-rows.ts';

export interface PackageSearch {
    type?: string;
    q?: string;
}

export class PackageService extends Service {
    get #blobs(): PackageBlobService {
        return packageBlobs(this.server);
    }

    blobPath(sha256: string): string {
        return this.#blobs.path(sha256);
    }

    /** Stores one file of a generic package version, making the package and version as needed. */
    async upload(ref: PackageVersionRef, filename: string, content: Readable, creator: UserRow): Promise<StoredPackageFile> {
        checkGenericRef(ref, filename);
        const received = await this.#blobs.receive(content);
        try {
            const fileId = await this.#blobs.store(received, () => this.#recordFile(ref, filename, received, creator));
            return await this.#storedFile(fileId);
        } finally {
            await this.#blobs.discard(received);
        }
    }

    async #recordFile(ref: PackageVersionRef, filename: string, received: ReceivedContent, creator: UserRow): Promise<number> {
        return await this.knex.transaction(async (trx) => {
            const created = now();
            const packageId = await this.#ensurePackage(trx, ref, created);
            const versionId = await this.#ensureVersion(trx, packageId, ref.version, creator, created);
            const blobId = await ensureBlobRow(trx, received);
            return await this.#insertFile(trx, versionId, blobId, filename, received.size);
        });
    }

    async #ensurePackage(trx: Knex.Transaction, ref: PackageVersionRef, created: number): Promise<number> {
        const lowerName = ref.name.toLowerCase();
        await trx('packages')
            .insert({ owner_id: ref.owner.id, type: ref.type, name: ref.name, lower_name: lowerName, created_at: created })
            .onConflict(['owner_id', 'type', 'lower_name'])
            .ignore();
        const row = await trx('packages').where({ owner_id: ref.owner.id, type: ref.type, lower_name: lowerName }).first('id');
        return Number(row.id);
    }

    async #ensureVersion(trx: Knex.Transaction, packageId: number, version: string, creator: UserRow, created: number): Promise<number> {
        const lowerVersion = version.toLowerCase();
        await trx('package_versions')
            .insert({ package_id: packageId, creator_id: creator.id, version, lower_version: lowerVersion, created_at: created })
            .onConflict(['package_id', 'lower_version'])
            .ignore();
        const row = await trx('package_versions').where({ package_id: packageId, lower_version: lowerVersion }).first('id');
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
        await this.#blobs.collectByIds([file.blob_id]);
    }

    /** Deletes a version with all its files. */
    async deleteVersion(ref: PackageVersionRef): Promise<void> {
        checkGenericRef(ref);
        const version = await this.#version(ref);
        const blobIds = await this.knex('package_files').where({ version_id: version.id }).pluck('blob_id');
        await this.knex.transaction(async (trx) => {
            await this.#deleteVersionRow(trx, version);
        });
        await this.#blobs.collectByIds(blobIds.map(Number));
    }

    async #deleteVersionRow(trx: Knex.Transaction, version: PackageVersionRow): Promise<void> {
        await trx('package_versions').where({ id: version.id }).delete();
        const otherVersion = await trx('package_versions').where({ package_id: version.package_id }).first('id');
        if (!otherVersion) {
            await trx('packages').where({ id: version.package_id }).delete();
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
        const usersById = new Map(found.map((raw: Record<string, unknown>) => [Number(raw.id), toUserRow(raw)]));
        return rows.map((row) => toPackageEntry(row, usersById));
    }
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

    const blobs = packageBlobs(server);
    const hashes = await trx('package_files as f')
        .join('package_versions as v', 'v.id', 'f.version_id')
        .join('packages as p', 'p.id', 'v.package_id')
        .join('package_blobs as b', 'b.id', 'f.blob_id')
        .where('p.owner_id', owner.id)
        .distinct()
        .pluck('b.hash_sha256');
    await trx('packages').where({ owner_id: owner.id }).delete();
    return async () => await blobs.collect(hashes.map(String));
}

registerOwnedThings({ name: 'packages', count: countOwnedPackages, purge: purgeOwnedPackages });

export const packages = defineService<PackageService>('packages', (owner) => new PackageService(owner));
