import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import Boom from '@hapi/boom';
import type { Knex } from 'knex';

import { now } from '../../../../lib/database.ts';
import { Service } from '../../../../lib/service.ts';
import { defineService } from '../../../../lib/services.ts';
import { KeyedLock } from './keyed-lock.ts';

export const MAX_PACKAGE_FILE_BYTES = 1024 ** 3;

const HASH_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;

interface ContentDigest {
    size: number;
    md5: string;
    sha1: string;
    sha256: string;
    sha512: string;
}

/** An uploaded body in a temporary file, not yet a blob. */
export interface ReceivedContent extends ContentDigest {
    temporary: string;
}

/** Passes the chunks on, counting and hashing them; more than MAX_PACKAGE_FILE_BYTES fails the stream with a 413. */
function digestingMeter(): { meter: Transform; digest: () => ContentDigest } {
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
    const digest = () => {
        const [md5, sha1, sha256, sha512] = hashes.map((hash) => hash.digest('hex')) as [string, string, string, string];
        return { size, md5, sha1, sha256, sha512 };
    };
    return { meter, digest };
}

/** Makes the content's `package_blobs` row unless there is one, inside the caller's transaction; gives its id. */
export async function ensureBlobRow(trx: Knex.Transaction, received: ReceivedContent): Promise<number> {
    const { size, md5, sha1, sha256, sha512 } = received;
    await trx('package_blobs')
        .insert({ size, hash_md5: md5, hash_sha1: sha1, hash_sha256: sha256, hash_sha512: sha512, created_at: now() })
        .onConflict(['hash_sha256'])
        .ignore();
    const row = await trx('package_blobs').where({ hash_sha256: sha256 }).first('id');
    return Number(row.id);
}

/**
 * The packages' content on disk, one file per sha256 however many package files share it. A blob's row and its file
 * change together, so storing and collecting take the blob's lock.
 */
export class PackageBlobService extends Service {
    readonly #lock = new KeyedLock();

    get #root(): string {
        return this.server.app.config.packagesDir;
    }

    /** `<packagesDir>/<sha256[0:2]>/<sha256[2:4]>/<sha256>`, as Gitea lays its blobs out. */
    path(sha256: string): string {
        return Path.join(this.#root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    }

    /** Streams the body to a temporary file beside the blobs, hashing it on the way; `discard` removes that file. */
    async receive(content: Readable): Promise<ReceivedContent> {
        const directory = Path.join(this.#root, '.tmp');
        await Fs.promises.mkdir(directory, { recursive: true });
        const temporary = Path.join(directory, Crypto.randomUUID());
        const { meter, digest } = digestingMeter();
        try {
            await pipeline(content, meter, Fs.createWriteStream(temporary, { flags: 'wx' }));
        } catch (error) {
            await Fs.promises.rm(temporary, { force: true });
            throw error;
        }

        return { temporary, ...digest() };
    }

    async discard(received: ReceivedContent): Promise<void> {
        await Fs.promises.rm(received.temporary, { force: true });
    }

    /**
     * Puts the content in place as its blob, then runs `record`, which writes the rows. The blob goes on disk before
     * its row exists, so no row ever names a missing file; a blob that had no row is removed again if `record` fails.
     */
    async store<T>(received: ReceivedContent, record: () => Promise<T>): Promise<T> {
        return await this.#lock.run(received.sha256, async () => {
            const rowExisted = Boolean(await this.knex('package_blobs').where({ hash_sha256: received.sha256 }).first('id'));
            await this.#place(received);
            try {
                return await record();
            } catch (error) {
                if (!rowExisted) {
                    await Fs.promises.rm(this.path(received.sha256), { force: true });
                }

                throw error;
            }
        });
    }

    async #place(received: ReceivedContent): Promise<void> {
        const target = this.path(received.sha256);
        if (Fs.existsSync(target)) {
            return;
        }

        await Fs.promises.mkdir(Path.dirname(target), { recursive: true });
        await Fs.promises.rename(received.temporary, target);
    }

    /** Removes the blobs no file points at any more, rows and files on disk. */
    async collect(hashes: string[]): Promise<void> {
        for (const hash of new Set(hashes)) {
            await this.#lock.run(hash, async () => {
                const removed = await this.knex('package_blobs')
                    .where({ hash_sha256: hash })
                    .whereNotExists((files) =>
                        files.select('id').from('package_files').whereRaw('package_files.blob_id = package_blobs.id'),
                    )
                    .delete();
                if (removed > 0) {
                    await Fs.promises.rm(this.path(hash), { force: true });
                }
            });
        }
    }

    /** `collect`, for blobs named by their ids. */
    async collectByIds(blobIds: number[]): Promise<void> {
        const hashes = await this.knex('package_blobs')
            .whereIn('id', [...new Set(blobIds)])
            .pluck('hash_sha256');
        await this.collect(hashes.map(String));
    }
}

export const packageBlobs = defineService<PackageBlobService>('packageBlobs', (owner) => new PackageBlobService(owner));
