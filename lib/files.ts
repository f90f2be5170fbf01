import Fs from 'node:fs';
import Path from 'node:path';

/** The bytes of every regular file below `directory`; links are not followed. */
export async function directorySize(directory: string): Promise<number> {
    let total = 0;
    for (const entry of await Fs.promises.readdir(directory, { withFileTypes: true })) {
        const path = Path.join(directory, entry.name);
        if (entry.isDirectory()) {
            total += await directorySize(path);
        } else if (entry.isFile()) {
            total += (await Fs.promises.lstat(path)).size;
        }
    }

    return total;
}
