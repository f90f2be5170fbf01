import { spawnSync } from 'node:child_process';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { tarOf } from '../../../../../plugins/deploy/domain/engine/file-archive.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function tar(archive: Buffer, ...args: string[]): string {
    const result = spawnSync('tar', [...args, '-f', '-'], { input: archive, encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    return result.stdout;
}

describe('deploy engine: the tar archive of the files put in a container', () => {
    const deep = `/srv/${'folder/'.repeat(20)}value.txt`;
    const token = { path: '/run/secrets/token', content: Buffer.from('s3cret\n'), uid: 33, gid: 44, mode: 0o400 };
    const files = [token, { path: deep, content: Buffer.alloc(1500, 'x'), uid: 0, gid: 0, mode: 0o644 }];

    it('is read by tar: names (a long one as prefix and name), owners, modes, sizes and contents', () => {
        const archive = tarOf(files);
        expect(archive.length % 512).to.equal(0);
        const listing = tar(archive, '-tv', '--numeric-owner').trim().split('\n');
        expect(listing).to.have.length(2);
        expect(listing[0]).to.match(/^-r-------- 33\/44 +7 .* run\/secrets\/token$/);
        expect(listing[1]).to.match(new RegExp(`^-rw-r--r-- 0/0 +1500 .* ${deep.slice(1)}$`));
        expect(tar(archive, '-xO', 'run/secrets/token')).to.equal('s3cret\n');
        expect(tar(archive, '-xO', deep.slice(1))).to.equal('x'.repeat(1500));
    });

    it('refuses what a ustar header cannot hold', () => {
        const name = `/run/${'n'.repeat(120)}`;
        expect(() => tarOf([{ ...token, path: name }])).to.throw(/too long a path/);
        expect(() => tarOf([{ ...token, uid: 0o10000000 }])).to.throw(/does not fit a tar header field of 8 bytes/);
    });
});
