import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ValidationError } from '../../../lib/errors.ts';
import { ROOT_DIR } from '../../../server.ts';
import {
    checkSite,
    defaultSite,
    normalizeSite,
    parseSite,
    renderSite,
    type SiteSpec,
    validateSiteText,
} from '../../../plugins/deploy/nginx/site-model.ts';
import { readConf } from '../../../plugins/deploy/nginx/syntax.ts';
import { ensureNginx } from '../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const FIXTURES = Path.join(ROOT_DIR, 'test', 'fixtures', 'nginx');
const fixture = (name: string) => Fs.readFileSync(Path.join(FIXTURES, name), 'utf8');
const nginx = ensureNginx();
const needsNginx = { skip: nginx === undefined };

const OUTPOST = { outpostUrl: 'http://127.0.0.1:9000' };

const MODELS: Record<string, SiteSpec> = {
    'the default site': defaultSite({ domain: 'app.example.com', upstreamPort: 8080 }),
    'the default site behind forward auth': defaultSite({ domain: 'app.example.com', upstreamPort: 8080, forwardAuth: OUTPOST }),
    'plain HTTP only': {
        serverNames: ['intranet.example.net', '*.intranet.example.net'],
        http: { port: 8081 },
        locations: [{ path: '/', proxyPass: 'http://[::1]:9090/' }],
    },
    'several locations, ports and headers': {
        serverNames: ['chat.example.com'],
        http: { port: 8080 },
        https: { port: 8443, certificate: '/etc/ssl/chat/cert.pem', certificateKey: '/etc/ssl/chat/key.pem' },
        locations: [
            { path: '/', proxyPass: 'http://127.0.0.1:3000', headers: { 'X-Script-Name': '/' } },
            { path: '/socket.io/', proxyPass: 'http://127.0.0.1:3001', websocket: true, auth: true },
            { path: '/api/', proxyPass: 'http://127.0.0.1:3000/api/', auth: true, headers: { 'X-Api': "a;b {c} #d 'e'" } },
        ],
        clientMaxBodySize: '1g',
        headers: { 'Content-Security-Policy': "default-src 'self'; frame-ancestors 'none'", 'X-Frame-Options': 'DENY' },
        acmeChallengeRoot: '/srv/acme-challenges',
        forwardAuth: {
            outpostUrl: 'https://localhost:9443',
            signInPath: 'https://auth.example.com/outpost.goauthentik.io/start',
            headers: ['X-authentik-username', 'X-authentik-groups'],
        },
        extra: 'proxy_read_timeout 300s;\n\n# long polling\nlocation = /healthz {\n    return 204;\n}',
    },
};

function refusal(spec: SiteSpec): string {
    try {
        renderSite(spec);
    } catch (error) {
        expect(error).to.be.an.instanceof(ValidationError);
        return (error as Error).message;
    }

    throw new Error('renderSite accepted the payload');
}

function siteWith(change: (spec: SiteSpec) => void): SiteSpec {
    const spec = structuredClone(MODELS['several locations, ports and headers'] as SiteSpec);
    change(spec);
    return spec;
}

/** [field named in the error, change that tries to smuggle a directive, or worse, into the site]. */
const INJECTIONS: Array<[string, (spec: SiteSpec) => void]> = [
    ['serverNames[0]', (spec) => (spec.serverNames[0] = 'a.example.com; include /etc/shadow')],
    ['serverNames[0]', (spec) => (spec.serverNames[0] = 'a.example.com\nlocation /x { return 200; }')],
    ['serverNames[0]', (spec) => (spec.serverNames[0] = 'a.example.com}')],
    ['serverNames[0]', (spec) => (spec.serverNames[0] = '$host')],
    ['serverNames[0]', (spec) => (spec.serverNames[0] = 'a.example.com#')],
    ['locations[0].path', (spec) => ((spec.locations[0] as { path: string }).path = '/x { return 200; } location /y')],
    ['locations[0].path', (spec) => ((spec.locations[0] as { path: string }).path = '/x;autoindex on')],
    ['locations[0].path', (spec) => ((spec.locations[0] as { path: string }).path = '/"quoted"')],
    ['locations[0].path', (spec) => ((spec.locations[0] as { path: string }).path = '/#comment')],
    [
        'locations[0].proxyPass',
        (spec) => ((spec.locations[0] as { proxyPass: string }).proxyPass = 'http://127.0.0.1:80; proxy_pass http://evil'),
    ],
    ['locations[0].proxyPass', (spec) => ((spec.locations[0] as { proxyPass: string }).proxyPass = 'http://evil.example.com:80')],
    ['locations[0].proxyPass', (spec) => ((spec.locations[0] as { proxyPass: string }).proxyPass = 'http://127.0.0.1.evil.example:80')],
    ['locations[0].proxyPass', (spec) => ((spec.locations[0] as { proxyPass: string }).proxyPass = 'http://127.0.0.1:80/$request_uri')],
    ['locations[0].proxyPass', (spec) => ((spec.locations[0] as { proxyPass: string }).proxyPass = 'http://127.0.0.1:99999')],
    ['locations[0].headers', (spec) => ((spec.locations[0] as { headers: Record<string, string> }).headers = { 'X-A; autoindex on': 'v' })],
    [
        'locations[0].headers.X-A',
        (spec) => ((spec.locations[0] as { headers: Record<string, string> }).headers = { 'X-A': 'v"; autoindex on; #' }),
    ],
    [
        'locations[0].headers.X-A',
        (spec) => ((spec.locations[0] as { headers: Record<string, string> }).headers = { 'X-A': '$http_authorization' }),
    ],
    ['headers.X-B', (spec) => (spec.headers = { 'X-B': 'one\nadd_header X-C two' })],
    ['headers.X-B', (spec) => (spec.headers = { 'X-B': 'a\\" always; autoindex on; "' })],
    ['headers', (spec) => (spec.headers = { 'X-B {': 'x' })],
    ['clientMaxBodySize', (spec) => (spec.clientMaxBodySize = '10m; autoindex on')],
    ['clientMaxBodySize', (spec) => (spec.clientMaxBodySize = '10m\n')],
    ['https.certificate', (spec) => ((spec.https as { certificate: string }).certificate = '/etc/ssl/a.pem; ssl_verify_client off')],
    ['https.certificateKey', (spec) => ((spec.https as { certificateKey: string }).certificateKey = "/etc/ssl/'key'.pem")],
    ['acmeChallengeRoot', (spec) => (spec.acmeChallengeRoot = '/var/www/../../etc')],
    ['acmeChallengeRoot', (spec) => (spec.acmeChallengeRoot = '/var/www/acme; autoindex on')],
    ['http.port', (spec) => ((spec.http as { port: unknown }).port = '80; listen 8080')],
    ['forwardAuth.outpostUrl', (spec) => ((spec.forwardAuth as { outpostUrl: string }).outpostUrl = 'http://127.0.0.1:9000/; return 200')],
    ['forwardAuth.signInPath', (spec) => ((spec.forwardAuth as { signInPath: string }).signInPath = '/start?rd=$foo')],
    ['forwardAuth.headers[0]', (spec) => ((spec.forwardAuth as { headers: string[] }).headers = ['X-A $b'])],
    ['extra', (spec) => (spec.extra = '}\nserver { listen 81; }\nserver {')],
    ['extra', (spec) => (spec.extra = 'autoindex on;\n# end of extra\n')],
    ['extra', (spec) => (spec.extra = 'add_header X "unterminated;')],
];

describe('nginx site model: render and parse', () => {
    for (const [name, model] of Object.entries(MODELS)) {
        it(`round-trips ${name} through render and parse with an equal model`, () => {
            const text = renderSite(model);
            const parsed = parseSite(text);
            expect(parsed.text).to.equal(text);
            expect(parsed.spec).to.equal(normalizeSite(model));
            expect(renderSite(parsed.spec)).to.equal(text);
        });
    }

    it('renders the ACME location, the redirect, certificates, proxy headers, WebSocket upgrade and body size', () => {
        const text = renderSite(MODELS['several locations, ports and headers'] as SiteSpec);
        expect(text).to.contain('location ^~ /.well-known/acme-challenge/ {\n        root /srv/acme-challenges;');
        expect(text).to.contain('return 301 https://$host:8443$request_uri;');
        expect(text).to.contain('listen 8443 ssl;');
        expect(text).to.contain('ssl_certificate /etc/ssl/chat/cert.pem;');
        expect(text).to.contain('ssl_certificate_key /etc/ssl/chat/key.pem;');
        for (const header of [
            'Host $host',
            'X-Real-IP $remote_addr',
            'X-Forwarded-For $proxy_add_x_forwarded_for',
            'X-Forwarded-Proto $scheme',
        ]) {
            expect(text).to.contain(`proxy_set_header ${header};`);
        }

        expect(text).to.contain('proxy_set_header Upgrade $http_upgrade;');
        expect(text).to.contain('client_max_body_size 1g;');
        expect(text).to.contain('auth_request /outpost.goauthentik.io/auth/nginx;');
        expect(text).to.contain('return 302 https://auth.example.com/outpost.goauthentik.io/start?rd=$scheme://$http_host$request_uri;');
    });

    it('keeps hand-edited text as written and reads what it can understand', () => {
        const text = fixture('hand-edited.conf');
        const { spec, text: kept } = parseSite(text);
        expect(kept).to.equal(text);
        expect(spec.serverNames).to.equal(['wiki.example.org', 'www.wiki.example.org']);
        expect(spec.http).to.equal({ port: 80 });
        expect(spec.https).to.equal({
            port: 8443,
            certificate: '/etc/ssl/wiki/fullchain.pem',
            certificateKey: '/etc/ssl/wiki/privkey.pem',
        });
        expect(spec.clientMaxBodySize).to.equal('25m');
        expect(spec.acmeChallengeRoot).to.equal('/srv/acme');
        expect(spec.headers).to.equal({
            'X-Content-Type-Options': 'nosniff',
            'Content-Security-Policy': "default-src 'self'; img-src * data:",
        });
        expect(spec.locations).to.equal([
            { path: '/', proxyPass: 'http://127.0.0.1:3001', headers: { 'X-Script-Name': '/' } },
            { path: '/socket/', proxyPass: 'http://[::1]:3002', websocket: true },
        ]);
        // What the model has no field for is carried in `extra`, verbatim, so a re-render keeps it.
        expect(spec.extra).to.equal(
            'proxy_read_timeout 120s;\nlocation ~* \\.(png|jpg)$ {\n    expires 7d;\n    proxy_pass http://127.0.0.1:3001;\n}',
        );
        expect(parseSite(renderSite(spec)).spec).to.equal(spec);
    });

    it('refuses text that does not parse, naming the line', () => {
        expect(() => parseSite('server {\n    listen 80;\n')).to.throw(ValidationError, /^text: line 1: unexpected end of file/);
        expect(() => parseSite('server {\n    listen 80;\n}\n}\n')).to.throw(ValidationError, 'text: line 4: unexpected "}"');
        expect(() => parseSite('server {\n    server_name "a"b;\n}')).to.throw(ValidationError, 'text: line 2: unexpected "b"');
        expect(() => parseSite('# only a comment\n')).to.throw(ValidationError, 'text: no server block');
    });

    it('tokenizes quoted strings, escapes, comments and ${variables}', () => {
        const tree = readConf("a \"x;y\" 'q\\'s' b\\;c ${host}x; # note ; {\nb { c; }\n");
        const [first, second] = tree.directives;
        expect(first?.args.map((argument) => argument.value)).to.equal(['x;y', "q's", 'b;c', '${host}x']);
        expect(tree.comments.map((comment) => comment.text)).to.equal(['note ; {']);
        expect(second?.block?.[0]?.name).to.equal('c');
        expect(second?.line).to.equal(2);
    });
});

describe('nginx site model: injection', () => {
    it(`refuses ${INJECTIONS.length} injection attempts, naming the field`, () => {
        expect(INJECTIONS.length).to.be.at.least(15);
        for (const [field, inject] of INJECTIONS) {
            const spec = siteWith(inject);
            const message = refusal(spec);
            expect(message.startsWith(`${field}: `), `${field} → ${message}`).to.be.true();
            expect(checkSite(spec).some((finding) => finding.level === 'error' && finding.path === field)).to.be.true();
        }
    });

    it('keeps `;`, braces, `#` and single quotes inert inside quoted header values', () => {
        const spec = MODELS['several locations, ports and headers'] as SiteSpec;
        const text = renderSite(spec);
        const server = readConf(text).directives[1];
        const names = (server?.block ?? []).map((directive) => directive.name);
        expect(names.filter((name) => name === 'autoindex')).to.equal([]);
        expect(parseSite(text).spec.locations[2]?.headers).to.equal({ 'X-Api': "a;b {c} #d 'e'" });
    });
});

describe('nginx site model: checks', () => {
    it('lints risky or incomplete sites', () => {
        const plain = checkSite(MODELS['plain HTTP only'] as SiteSpec);
        expect(plain.map((finding) => `${finding.level} ${finding.path}`)).to.equal(['warning https']);
        const unguarded = checkSite({ ...(MODELS['the default site'] as SiteSpec), forwardAuth: OUTPOST });
        expect(unguarded.map((finding) => finding.path)).to.include('forwardAuth');
        const noOutpost = defaultSite({ domain: 'a.example.com', upstreamPort: 1 });
        (noOutpost.locations[0] as { auth?: boolean }).auth = true;
        expect(checkSite(noOutpost)[0]).to.equal({
            path: 'forwardAuth',
            level: 'error',
            message: 'a location asks for forward auth, but no outpost is set',
        });
        const duplicate = defaultSite({ domain: 'a.example.com', upstreamPort: 1 });
        duplicate.locations.push({ path: '/', proxyPass: 'http://127.0.0.1:2' });
        expect(checkSite(duplicate)[0]?.path).to.equal('locations[1].path');
        expect(
            checkSite({ ...duplicate, locations: [{ path: '/.well-known/acme-challenge/x', proxyPass: 'http://127.0.0.1:2' }] })[0]?.path,
        ).to.equal('locations[0].path');
    });
});

describe('nginx site model: nginx -t in an isolated prefix', () => {
    it('passes every rendered model and the hand-edited site', needsNginx, async () => {
        for (const model of Object.values(MODELS)) {
            const result = await validateSiteText(renderSite(model), { nginxBin: nginx });
            expect(result, JSON.stringify(result)).to.equal({ ok: true, errors: [], warnings: [] });
        }

        expect((await validateSiteText(fixture('hand-edited.conf'), { nginxBin: nginx })).ok).to.be.true();
    });

    it("catches a broken site and reports nginx's message with the site's line", needsNginx, async () => {
        const result = await validateSiteText(fixture('broken.conf'), { nginxBin: nginx });
        expect(result.ok).to.be.false();
        expect(result.errors).to.equal([
            {
                path: 'text',
                level: 'error',
                message: 'invalid value "maybe" in "proxy_buffering" directive, it must be "on" or "off" (line 8)',
                line: 8,
            },
        ]);
        const unclosed = await validateSiteText('server {\n    listen 80;\n    location / {\n', { nginxBin: nginx });
        expect(unclosed.errors[0]?.line).to.equal(4);
        expect(unclosed.errors[0]?.message).to.contain('unexpected end of file');
    });

    it('reports nginx warnings with the original ports, and a missing nginx plainly', needsNginx, async () => {
        const site = 'server { listen 80; server_name a.example.com; }\nserver { listen 80; server_name a.example.com; }\n';
        const result = await validateSiteText(site, { nginxBin: nginx });
        expect(result.ok).to.be.true();
        expect(result.warnings[0]?.message).to.equal('conflicting server name "a.example.com" on 0.0.0.0:80, ignored');
        await expect(validateSiteText(site, { nginxBin: '/nonexistent/nginx' })).to.reject(/nginx was not found at \/nonexistent\/nginx/);
    });
});
