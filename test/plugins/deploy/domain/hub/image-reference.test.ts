import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ValidationError } from '../../../../../lib/errors.ts';
import {
    canonicalReference,
    familiarName,
    type ImageReference,
    parseImageReference,
    parseRepositoryName,
    registryBaseUrl,
} from '../../../../../plugins/deploy/domain/hub/image-reference.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const DIGEST = `sha256:${'ab'.repeat(32)}`;

const VALID: Array<[string, ImageReference, string]> = [
    ['nginx', { registry: 'docker.io', repository: 'library/nginx', tag: 'latest', digest: null }, 'nginx'],
    ['nginx:1.25', { registry: 'docker.io', repository: 'library/nginx', tag: '1.25', digest: null }, 'nginx'],
    ['library/nginx', { registry: 'docker.io', repository: 'library/nginx', tag: 'latest', digest: null }, 'nginx'],
    ['docker.io/library/nginx', { registry: 'docker.io', repository: 'library/nginx', tag: 'latest', digest: null }, 'nginx'],
    ['docker.io/nginx:stable-alpine', { registry: 'docker.io', repository: 'library/nginx', tag: 'stable-alpine', digest: null }, 'nginx'],
    ['index.docker.io/bitnami/redis:7', { registry: 'docker.io', repository: 'bitnami/redis', tag: '7', digest: null }, 'bitnami/redis'],
    ['bitnami/nginx', { registry: 'docker.io', repository: 'bitnami/nginx', tag: 'latest', digest: null }, 'bitnami/nginx'],
    ['ghcr.io/o/x:tag', { registry: 'ghcr.io', repository: 'o/x', tag: 'tag', digest: null }, 'ghcr.io/o/x'],
    ['lscr.io/linuxserver/x', { registry: 'lscr.io', repository: 'linuxserver/x', tag: 'latest', digest: null }, 'lscr.io/linuxserver/x'],
    [`127.0.0.1:5000/x@${DIGEST}`, { registry: '127.0.0.1:5000', repository: 'x', tag: null, digest: DIGEST }, '127.0.0.1:5000/x'],
    [`127.0.0.1:5000/a/b:1@${DIGEST}`, { registry: '127.0.0.1:5000', repository: 'a/b', tag: '1', digest: DIGEST }, '127.0.0.1:5000/a/b'],
    ['localhost/x', { registry: 'localhost', repository: 'x', tag: 'latest', digest: null }, 'localhost/x'],
    [
        'localhost:5000/team/app:v1.2.3',
        { registry: 'localhost:5000', repository: 'team/app', tag: 'v1.2.3', digest: null },
        'localhost:5000/team/app',
    ],
    ['quay.io/a__b/c.d-e_f', { registry: 'quay.io', repository: 'a__b/c.d-e_f', tag: 'latest', digest: null }, 'quay.io/a__b/c.d-e_f'],
    ['  nginx  ', { registry: 'docker.io', repository: 'library/nginx', tag: 'latest', digest: null }, 'nginx'],
];

const INVALID: Array<[string, string]> = [
    ['', 'give an image reference'],
    ['NGINX', 'lower case'],
    ['nginx:', 'the tag ".*" is not valid'],
    ['nginx:-bad', 'the tag ".*" is not valid'],
    [`nginx:${'a'.repeat(129)}`, 'the tag ".*" is not valid'],
    ['nginx@sha256:abc', 'the digest ".*" is not valid'],
    [`nginx@md5:${'a'.repeat(32)}`, 'the digest ".*" is not valid'],
    ['nginx@', 'the digest ".*" is not valid'],
    ['ghcr.io/', 'is not a repository name'],
    ['/nginx', 'is not a repository name'],
    ['a//b', 'is not a repository name'],
    ['-x/y', 'is not a repository name'],
    ['x_/y', 'is not a repository name'],
    ['ghcr.io/o/x y', 'is not a'],
    ['my-.registry.io/x', 'is not a registry host'],
    [`docker.io/${'a'.repeat(256)}`, 'longer than 255'],
    ['a'.repeat(513), 'give an image reference'],
];

describe('image references', () => {
    for (const [text, expected, familiar] of VALID) {
        it(`reads ${JSON.stringify(text)}`, () => {
            const reference = parseImageReference(text);
            expect(reference).to.equal(expected);
            expect(familiarName(reference)).to.equal(familiar);
        });
    }

    for (const [text, message] of INVALID) {
        it(`refuses ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)}`, () => {
            expect(() => parseImageReference(text)).to.throw(ValidationError, new RegExp(message));
        });
    }

    it('spells every part out', () => {
        expect(canonicalReference(parseImageReference('nginx'))).to.equal('docker.io/library/nginx:latest');
        expect(canonicalReference(parseImageReference(`ghcr.io/o/x@${DIGEST}`))).to.equal(`ghcr.io/o/x@${DIGEST}`);
    });

    it('takes a repository without tag or digest for tag lists', () => {
        expect(parseRepositoryName('nginx')).to.equal({ registry: 'docker.io', repository: 'library/nginx', tag: null, digest: null });
        expect(parseRepositoryName('127.0.0.1:5000/x').registry).to.equal('127.0.0.1:5000');
        expect(() => parseRepositoryName('nginx:1.25')).to.throw(ValidationError, /without a tag or digest/);
        expect(() => parseRepositoryName(`nginx@${DIGEST}`)).to.throw(ValidationError, /without a tag or digest/);
    });

    it('reaches Docker Hub at registry-1.docker.io, loopback registries over plain HTTP, the rest over HTTPS', () => {
        expect(registryBaseUrl('docker.io')).to.equal('https://registry-1.docker.io');
        expect(registryBaseUrl('127.0.0.1:5000')).to.equal('http://127.0.0.1:5000');
        expect(registryBaseUrl('localhost:5000')).to.equal('http://localhost:5000');
        expect(registryBaseUrl('localhost')).to.equal('https://localhost');
        expect(registryBaseUrl('127.0.0.2:5000')).to.equal('https://127.0.0.2:5000');
        expect(registryBaseUrl('ghcr.io')).to.equal('https://ghcr.io');
    });
});
