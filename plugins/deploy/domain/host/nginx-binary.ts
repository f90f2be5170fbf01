/** Where the nginx program is: a machine fact, read by the runs (test and reload) and by the status pages. */
import Fs from 'node:fs';
import Path from 'node:path';

function findOnPath(name: string): string | undefined {
    for (const dir of (process.env.PATH ?? '').split(Path.delimiter)) {
        const candidate = Path.join(dir, name);
        try {
            Fs.accessSync(candidate, Fs.constants.X_OK);
            return candidate;
        } catch {
            // not here
        }
    }

    return undefined;
}

/** NGINX_BIN, else `nginx` on PATH, else Debian's /usr/sbin/nginx (not on a normal user's PATH). */
export function nginxBinary(explicit?: string): string {
    return explicit ?? process.env.NGINX_BIN ?? findOnPath('nginx') ?? '/usr/sbin/nginx';
}
