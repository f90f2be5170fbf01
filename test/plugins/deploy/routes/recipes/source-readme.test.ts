import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { sourceReadmeUrl } from '../../../../../plugins/deploy/domain/hub/source-readme.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { type FakeUpstream, startFakeUpstream } from '../../../../support/fake-upstream.ts';
import { type LocalRegistry, pushImage, startLocalRegistry } from '../../../../support/local-registry.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Evidence {
    method: string;
    level: string;
    sources: Array<{ what: string }>;
}

const README = '# Board\n\nA board for teams.\n\n## Sign-in\n\nTurn on SAML 2.0 in the settings, with your provider’s metadata.\n';

describe('evidence from the README of the source repository an image’s label names', () => {
    let registry: LocalRegistry;
    let forge: FakeUpstream;
    let outside: Http.Server;
    let outsideRequests = 0;
    let outsideOrigin = '';
    let server: DeployTestServer;
    let editor: Browser;

    const pushLabelled = async (repository: string, source: string) =>
        await pushImage(registry, repository, '1.0', {
            architecture: 'amd64',
            os: 'linux',
            config: { Labels: { 'org.opencontainers.image.source': source } },
            rootfs: { type: 'layers', diff_ids: [] },
        });
    const detect = async (repository: string) =>
        (await editor.get(`/api/sso/detect?${new URLSearchParams({ image: `${registry.host}/${repository}:1.0` }).toString()}`)).body as {
            evidence: Evidence[];
        };

    before(async () => {
        registry = await startLocalRegistry();
        forge = await startFakeUpstream();
        // A listener on another loopback address, outside the allow-list below: it must never be asked.
        outside = Http.createServer((_request, response) => {
            outsideRequests += 1;
            response.writeHead(200).end(README);
        });
        await new Promise<void>((resolve) => outside.listen(0, '127.0.0.2', resolve));
        outsideOrigin = `http://127.0.0.2:${(outside.address() as AddressInfo).port}`;
        forge.answer((_request, response, url) => {
            if (url.pathname === '/team/board/raw/HEAD/README.md') {
                response.writeHead(200, { 'content-type': 'text/plain' }).end(README);
            } else if (url.pathname === '/team/moved/raw/HEAD/README.md') {
                response.writeHead(302, { location: `${outsideOrigin}/team/moved/README.md` }).end();
            } else {
                response.writeHead(404).end();
            }
        });
        await pushLabelled('team/board', `${forge.baseUrl}/team/board`);
        await pushLabelled('team/moved', `${forge.baseUrl}/team/moved.git`);
        await pushLabelled('team/outside', `${outsideOrigin}/team/outside`);
        await pushLabelled('team/mailto', 'mailto:team@example.com');
        server = await deployTestServer({ HUB_ALLOWED_HOST_LIST: '127.0.0.1/32' });
        editor = await server.signInAs('editor');
    });

    after(async () => {
        await server?.context.cleanup();
        await forge?.stop();
        outside?.close();
        await registry?.stop();
    });

    it('builds the README’s address from the repository URL only', () => {
        expect(sourceReadmeUrl('https://github.com/team/board')).to.equal('https://raw.githubusercontent.com/team/board/HEAD/README.md');
        expect(sourceReadmeUrl('https://github.com/team/board.git')).to.equal(
            'https://raw.githubusercontent.com/team/board/HEAD/README.md',
        );
        expect(sourceReadmeUrl('https://gitlab.com/group/sub/app')).to.equal('https://gitlab.com/group/sub/app/-/raw/HEAD/README.md');
        expect(sourceReadmeUrl('https://codeberg.org/team/board/')).to.equal('https://codeberg.org/team/board/raw/HEAD/README.md');
        for (const refused of [
            'mailto:team@example.com',
            'ftp://forge.example/team/board',
            'https://user:pass@forge.example/a/b',
            'https://forge.example/',
            'https://forge.example/a/../b',
            'not a url',
        ]) {
            expect(sourceReadmeUrl(refused), refused).to.be.undefined();
        }
    });

    it('finds a method the source README names, with the README as its source', async () => {
        const detection = await detect('team/board');
        const saml = detection.evidence.find((item) => item.method === 'saml');
        expect(saml?.level).to.equal('found');
        expect(saml?.sources.map((source) => source.what)).to.include(
            'image source readme: Turn on SAML 2.0 in the settings, with your provider’s metadata.',
        );
        expect(forge.requests.filter((request) => request.path === '/team/board/raw/HEAD/README.md')).to.have.length(1);
        // Asked again, the README is kept.
        await detect('team/board');
        expect(forge.requests.filter((request) => request.path === '/team/board/raw/HEAD/README.md')).to.have.length(1);
    });

    it('never follows a redirect off the forge, nor asks a host the allow-list leaves out', async () => {
        expect((await detect('team/moved')).evidence.find((item) => item.method === 'saml')).to.be.undefined();
        expect(forge.requests.some((request) => request.path === '/team/moved/raw/HEAD/README.md')).to.be.true();
        expect((await detect('team/outside')).evidence.find((item) => item.method === 'saml')).to.be.undefined();
        expect((await detect('team/mailto')).evidence.find((item) => item.method === 'saml')).to.be.undefined();
        expect(outsideRequests).to.equal(0);
    });
});
