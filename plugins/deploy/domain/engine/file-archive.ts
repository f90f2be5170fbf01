/**
 * A tar archive (POSIX ustar) of a few small files, for the engine's putArchive: how compose mode puts a service's
 * secrets and configs in its container, with their owner and mode, before the container starts. Written here rather
 * than with a tar library: a header is one 512-byte block, and the maintained one (tar-stream 3) brings a dozen
 * packages for it.
 */

export interface ArchiveFile {
    /** Absolute, in the container. */
    path: string;
    content: Buffer;
    uid: number;
    gid: number;
    mode: number;
}

const BLOCK = 512;
const NAME_BYTES = 100;
const PREFIX_BYTES = 155;

export function tarOf(files: ArchiveFile[]): Buffer {
    return Buffer.concat([...files.flatMap((file) => [headerOf(file), padded(file.content)]), Buffer.alloc(BLOCK * 2)]);
}

function headerOf(file: ArchiveFile): Buffer {
    const block = Buffer.alloc(BLOCK);
    const { prefix, name } = splitPath(file.path.replace(/^\/+/, ''));
    block.write(name, 0, NAME_BYTES, 'utf8');
    writeOctal(block, 100, 8, file.mode & 0o7777);
    writeOctal(block, 108, 8, file.uid);
    writeOctal(block, 116, 8, file.gid);
    writeOctal(block, 124, 12, file.content.length);
    writeOctal(block, 136, 12, Math.floor(Date.now() / 1000));
    block.write('0', 156, 'latin1');
    block.write('ustar\u000000', 257, 'latin1');
    block.write(prefix, 345, PREFIX_BYTES, 'utf8');
    // The checksum is the sum of the header's bytes with its own field counted as spaces.
    block.fill(' ', 148, 156);
    const checksum = block.reduce((sum, byte) => sum + byte, 0);
    block.write(`${checksum.toString(8).padStart(6, '0')}\u0000 `, 148, 'latin1');
    return block;
}

/** ustar keeps a long path as a prefix (its folders) and a name of at most 100 bytes. */
function splitPath(path: string): { prefix: string; name: string } {
    if (Buffer.byteLength(path) <= NAME_BYTES) {
        return { prefix: '', name: path };
    }

    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
        const prefix = path.slice(0, slash);
        const name = path.slice(slash + 1);
        if (Buffer.byteLength(prefix) <= PREFIX_BYTES && Buffer.byteLength(name) <= NAME_BYTES) {
            return { prefix, name };
        }
    }

    throw new Error(`${path} is too long a path for a file put in a container`);
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
    const digits = value.toString(8);
    if (!Number.isSafeInteger(value) || value < 0 || digits.length > length - 1) {
        throw new Error(`${value} does not fit a tar header field of ${length} bytes`);
    }

    block.write(`${digits.padStart(length - 1, '0')}\u0000`, offset, length, 'latin1');
}

function padded(content: Buffer): Buffer {
    const rest = content.length % BLOCK;
    return rest === 0 ? content : Buffer.concat([content, Buffer.alloc(BLOCK - rest)]);
}
