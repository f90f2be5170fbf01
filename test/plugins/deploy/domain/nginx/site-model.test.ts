import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ValidationError } from '../../../../../lib/errors.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import {
    HIDDEN_MESSAGE,
    interpretNginxTest,
    MAX_RUNNING_TESTS,
    MAX_WAITING_TESTS,
    NginxBusyError,
} from '../../../../../plugins/deploy/domain/nginx/nginx-test.ts';
import {
    checkSite,
    checkSiteText,
    defaultSite,
    loopbackUpstreams,
    normalizeSite,
    parseSite,
    renderSite,
    type SitePlaces,
    type SiteSpec,
    validateSiteText,
} from '../../../../../plugins/deploy/domain/nginx/site-model.ts';
import { eachDirective } from '../../../../../plugins/deploy/domain/nginx/site-access.ts';
import type { LocationSpec } from '../../../../../plugins/deploy/domain/nginx/site-types.ts';
import {
    argumentValues,
    type ConfDirective,
    ConfTooDeepError,
    MAX_BLOCK_DEPTH,
    readConf,
} from '../../../../../plugins/deploy/domain/nginx/syntax.ts';
import { HEADER_MAP } from '../../../../../plugins/sso/methods/header.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { ensureNginx } from '../../../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it, after } = lab;
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
    'identity headers from the outpost under the names the app trusts': {
        serverNames: ['wiki.example.com'],
        http: { port: 80 },
        locations: [{ path: '/', proxyPass: 'http://127.0.0.1:3000', auth: true }],
        forwardAuth: {
            outpostUrl: 'http://127.0.0.1:9000',
            identityHeaders: { 'Remote-User': 'X-authentik-username', 'Remote-Email': 'X-authentik-email', 'X-idp-uid': 'X-authentik-uid' },
        },
    },
    'a SAML app: the ACS alone open, a service path, the username from the proxy': {
        serverNames: ['archive.example.com'],
        http: { port: 80 },
        https: { port: 443, certificate: '/etc/ssl/archive/cert.pem', certificateKey: '/etc/ssl/archive/key.pem' },
        locations: [
            { path: '/', proxyPass: 'http://127.0.0.1:3000', websocket: true, auth: true },
            {
                path: '/__svc/autologin',
                proxyPass: 'http://127.0.0.1:8000/api/autologin/archive',
                headers: { 'X-Gatehouse-Autologin-Token': 'token' },
                auth: true,
            },
            { path: '/mellon/postResponse', exact: true, proxyPass: 'http://127.0.0.1:3000/mellon/postResponse' },
        ],
        forwardAuth: { outpostUrl: 'http://127.0.0.1:9000', identityHeaders: HEADER_MAP },
    },
    'an open location beside a guarded one': {
        serverNames: ['docs.example.com'],
        http: { port: 80 },
        locations: [
            { path: '/', proxyPass: 'http://127.0.0.1:3000', auth: true },
            { path: '/public/', proxyPass: 'http://127.0.0.1:3000/public/' },
        ],
        forwardAuth: { outpostUrl: 'http://127.0.0.1:9000' },
    },
};

/** Headers apps take as the visitor's identity (issue 27): no visitor's copy may reach any upstream. */
const VISITOR_IDENTITY_HEADERS = [
    'Remote-User',
    'Remote-Email',
    'Remote-Name',
    'X-idp-username',
    'X-idp-email',
    'X-idp-name',
    'X-authentik-username',
    'X-authentik-groups',
    'X-authentik-email',
    'X-authentik-name',
    'X-authentik-uid',
    'X-authentik-jwt',
    'X-Forwarded-User',
    'X-Remote-User',
    'X-WEBAUTH-USER',
    'X-Forwarded-Email',
    'X-Forwarded-Preferred-Username',
];

/** Each location of the text that passes requests on, with the identity headers it lets a visitor's copy through. */
function identityLeaks(text: string): Array<{ location: string; leaks: string[] }> {
    const locations: ConfDirective[] = [];
    eachDirective(readConf(text).directives, (directive) => {
        if (directive.name === 'location' && (directive.block ?? []).some((inner) => inner.name === 'proxy_pass')) {
            locations.push(directive);
        }
    });
    return locations.map((location) => {
        const block = location.block ?? [];
        const answers = new Set(
            block.filter((directive) => directive.name === 'auth_request_set').map((directive) => argumentValues(directive)[0]),
        );
        const set = new Map(
            block
                .filter((directive) => directive.name === 'proxy_set_header')
                .map((directive) => [argumentValues(directive)[0]?.toLowerCase(), argumentValues(directive)[1] ?? ''] as const),
        );
        const leaks = VISITOR_IDENTITY_HEADERS.filter((header) => {
            const value = set.get(header.toLowerCase());
            return value === undefined || (value !== '' && !answers.has(value));
        });
        return { location: argumentValues(location).join(' '), leaks };
    });
}

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

    it('clears every identity header in every location that proxies, unless forward auth answers it there', () => {
        for (const [name, model] of Object.entries(MODELS)) {
            const leaks = identityLeaks(renderSite(model));
            expect(leaks.length, name).to.be.above(0);
            expect(leaks, name).to.equal(leaks.map(({ location }) => ({ location, leaks: [] })));
        }
    });

    it("refuses a model whose identity-provider kind has no file, and a location on the outpost's path", () => {
        const model = MODELS['an open location beside a guarded one'] as SiteSpec;
        const unknown = { ...model, forwardAuth: { kind: 'nosuchkind', outpostUrl: 'http://127.0.0.1:9000' } };
        expect(refusal(unknown)).to.startWith('forwardAuth.kind: ');
        const onOutpost = {
            ...model,
            locations: [...model.locations, { path: '/outpost.goauthentik.io/x', proxyPass: 'http://127.0.0.1:3000' }],
        };
        expect(refusal(onOutpost)).to.equal('locations[2].path: /outpost.goauthentik.io is served by the site itself');
    });

    it('serves the ACS as an exact-match location, read back as one', () => {
        const model = MODELS['a SAML app: the ACS alone open, a service path, the username from the proxy'] as SiteSpec;
        const text = renderSite(model);
        expect(text).to.contain('location = /mellon/postResponse {');
        expect(text).to.not.contain('location /mellon/postResponse');
        const acs = parseSite(text).spec.locations.find((location) => location.path === '/mellon/postResponse');
        expect(acs).to.equal({ path: '/mellon/postResponse', exact: true, proxyPass: 'http://127.0.0.1:3000/mellon/postResponse' });
        const both = { ...model, locations: [...model.locations, { path: '/mellon/postResponse', proxyPass: 'http://127.0.0.1:3000' }] };
        expect(checkSite(both).filter((finding) => finding.level === 'error')).to.equal([]);
        const twice = { ...model, locations: [...model.locations, model.locations[2] as LocationSpec] };
        expect(refusal(twice)).to.equal('locations[3].path: duplicate location = /mellon/postResponse');
    });

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
        // Text that does not read is answered without nginx (which would read the directives before the error).
        const unclosed = await validateSiteText('server {\n    listen 80;\n    location / {\n', { nginxBin: '/nonexistent/nginx' });
        expect(unclosed).to.equal({
            ok: false,
            errors: [{ path: 'text', level: 'error', message: 'unexpected end of file, expecting "}" (line 3)', line: 3 }],
            warnings: [],
        });
    });

    it('reports nginx warnings with the original ports, and a missing nginx plainly', needsNginx, async () => {
        const site = 'server { listen 80; server_name a.example.com; }\nserver { listen 80; server_name a.example.com; }\n';
        const result = await validateSiteText(site, { nginxBin: nginx });
        expect(result.ok).to.be.true();
        expect(result.warnings[0]?.message).to.equal('conflicting server name "a.example.com" on 0.0.0.0:80, ignored');
        await expect(validateSiteText(site, { nginxBin: '/nonexistent/nginx' })).to.reject(/nginx was not found at \/nonexistent\/nginx/);
    });
});

/** The places of the app `wiki` at wiki.example.com, as sitePlaces gives them. */
const PLACES: SitePlaces = {
    appDirs: ['/srv/gatehouse/apps/wiki'],
    certificateDirs: ['/srv/gatehouse/certificates/wiki.example.com'],
    acmeWebroot: '/srv/gatehouse/acme',
    configDir: '/etc/nginx',
    sitesDir: '/srv/gatehouse/nginx/sites',
};

/** A site with `lines` at the http level (before the server) and `inside` its server block, which starts on line 2. */
function site(inside: string, lines = ''): string {
    return `${lines.replace(/\n/g, ' ')}\nserver {\n    listen 80;\n    server_name wiki.example.com;\n    ${inside}\n}\n`;
}

/** [the line inside the server block (line 5), or at the http level with `http:` (line 1); the directive the refusal names]. */
const REFUSED: Array<[string, string]> = [
    ['include /etc/shadow;', 'include'],
    ['include ../../etc/shadow;', 'include'],
    ['include /etc/nginx/../shadow;', 'include'],
    ['include /etc/nginx/.?/shadow;', 'include'],
    ['include /etc/nginx/[.]*/shadow;', 'include'],
    ['include /etc/nginx/\\.\\./shadow;', 'include'],
    ['include /srv/gatehouse/apps/wiki/site.inc;', 'include'],
    ['types { include /etc/shadow; }', 'include'],
    ['http:map $host $x { include /etc/shadow; }', 'include'],
    ['http:geo $x { include /etc/shadow; }', 'include'],
    ['ssl_certificate /etc/ssl/private/other.pem;', 'ssl_certificate'],
    ['ssl_certificate_key engine:pkcs11:slot_0-id_1;', 'ssl_certificate_key'],
    ['ssl_certificate_key /srv/gatehouse/certificates/$ssl_server_name/privkey.pem;', 'ssl_certificate_key'],
    ['ssl_certificate_key /srv/gatehouse/certificates/other.example.com/privkey.pem;', 'ssl_certificate_key'],
    ['ssl_certificate_key /srv/gatehouse/certificates/wiki.example.com/../other.example.com/privkey.pem;', 'ssl_certificate_key'],
    ['ssl_trusted_certificate /etc/shadow;', 'ssl_trusted_certificate'],
    ['ssl_client_certificate /etc/shadow;', 'ssl_client_certificate'],
    ['ssl_crl /etc/shadow;', 'ssl_crl'],
    ['ssl_dhparam /etc/shadow;', 'ssl_dhparam'],
    ['ssl_password_file /etc/shadow;', 'ssl_password_file'],
    ['ssl_stapling_file /etc/shadow;', 'ssl_stapling_file'],
    ['ssl_session_ticket_key /etc/shadow;', 'ssl_session_ticket_key'],
    ['ssl_conf_command ChainCAFile /etc/shadow;', 'ssl_conf_command'],
    ['location / { proxy_ssl_certificate_key /etc/ssl/private/other.key; proxy_pass https://127.0.0.1:1; }', 'proxy_ssl_certificate_key'],
    ['location / { xslt_stylesheet /etc/shadow; }', 'xslt_stylesheet'],
    ['http:geoip_country /etc/shadow;', 'geoip_country'],
    ['access_log /etc/cron.d/evil;', 'access_log'],
    ['access_log /var/log/nginx/$host.log;', 'access_log'],
    ['access_log /var/log/nginx/../../../etc/cron.d/evil;', 'access_log'],
    ['access_log logs/access.log;', 'access_log'],
    ['error_log /srv/gatehouse/nginx/sites/evil.conf;', 'error_log'],
    ['proxy_temp_path /root;', 'proxy_temp_path'],
    ['client_body_temp_path /etc 1 2;', 'client_body_temp_path'],
    ['http:proxy_cache_path /etc/x keys_zone=evil:1m;', 'proxy_cache_path'],
    ['listen unix:/etc/evil.sock;', 'listen'],
    ['http:load_module /tmp/evil.so;', 'load_module'],
    ['http:perl_modules /tmp;', 'perl_modules'],
    ['location / { content_by_lua_file /tmp/evil.lua; }', 'content_by_lua_file'],
    ['location / { access_by_lua \'os.execute("id")\'; }', 'access_by_lua'],
    ['http:js_import /tmp/evil.js;', 'js_import'],
];

/** [the line inside the server block, the start of the risk's message]. */
const RISKS: Array<[string, string]> = [
    ['location / { root /; autoindex on; }', 'root / serves host files'],
    ['location /files/ { alias /etc/; }', 'alias /etc/ serves host files'],
    ['location / { root html; }', 'root html serves host files'],
    ['location / { root /srv/gatehouse/apps/wiki/$arg_p; }', 'root /srv/gatehouse/apps/wiki/$arg_p serves host files'],
    ['location / { alias /srv/gatehouse/certificates/wiki.example.com/; }', 'alias /srv/gatehouse/certificates/wiki.example.com/ serves'],
    ['auth_basic_user_file /etc/shadow;', "auth_basic_user_file /etc/shadow: nginx's workers read"],
    [
        'location / { proxy_pass http://unix:/var/run/docker.sock:/; }',
        'proxy_pass http://unix:/var/run/docker.sock:/: talks to a host socket',
    ],
    ['location / { root /srv/gatehouse/apps/wiki; dav_methods PUT DELETE; }', "dav_methods: nginx's workers write files"],
    ['location / { proxy_store on; proxy_pass http://127.0.0.1:1; }', "proxy_store: nginx's workers write files"],
];

const ALLOWED = [
    'include snippets/headers.conf;',
    'include /etc/nginx/proxy_params;',
    'include /etc/nginx/conf.d/*.conf;',
    'include /srv/gatehouse/nginx/sites/shared.inc;',
    'ssl_certificate /srv/gatehouse/certificates/wiki.example.com/fullchain.pem;',
    'ssl_certificate_key /srv/gatehouse/certificates/wiki.example.com/privkey.pem;',
    'ssl_certificate data:-----BEGIN;',
    'ssl_dhparam dhparam.pem;',
    'ssl_conf_command Options PrioritizeChaCha;',
    'access_log off;',
    'access_log /var/log/nginx/wiki.access.log combined;',
    'access_log syslog:server=unix:/dev/log;',
    'error_log stderr;',
    'error_log /var/log/nginx/wiki.error.log warn;',
    'proxy_temp_path /var/lib/nginx/wiki-proxy 1 2;',
    'location / { root /srv/gatehouse/apps/wiki/static; autoindex on; }',
    'location ^~ /.well-known/acme-challenge/ { root /srv/gatehouse/acme; }',
    'location /media/ { alias /srv/gatehouse/apps/wiki/media/; }',
    'auth_basic_user_file /srv/gatehouse/apps/wiki/htpasswd;',
    'location / { proxy_pass http://127.0.0.1:8080; proxy_store off; }',
    'listen unix:/srv/gatehouse/apps/wiki/nginx.sock;',
];

function placed(line: string): { text: string; line: number } {
    return line.startsWith('http:') ? { text: site('', line.slice('http:'.length)), line: 1 } : { text: site(line), line: 5 };
}

describe('nginx site model: what a site may make nginx read, write or run', () => {
    it(`refuses ${REFUSED.length} directives reaching host files or running code, naming line and directive`, () => {
        for (const [line, directive] of REFUSED) {
            const { text, line: number } = placed(line);
            const expected = `text: line ${number}: ${directive}`;
            expect(() => parseSite(text, PLACES), line).to.throw(
                ValidationError,
                new RegExp(`^${expected.replace(/[$()*.?[\]\\^{|}]/g, '\\$&')}`),
            );
            expect(() => checkSiteText(text, PLACES), line).to.throw(ValidationError);
        }
    });

    it(`lints ${RISKS.length} things nginx's workers would reach on the host as risks, and allows the rest`, () => {
        for (const [line, message] of RISKS) {
            const findings = checkSiteText(site(line), PLACES).filter((finding) => finding.level === 'risk');
            expect(findings, line).to.have.length(1);
            expect(findings[0]?.path).to.equal('text');
            expect(findings[0]?.message ?? '', line).to.startWith(`line 5: ${message}`);
            expect(parseSite(site(line), PLACES).text).to.equal(site(line));
        }

        for (const line of ALLOWED) {
            const findings = checkSiteText(site(line), PLACES);
            expect(
                findings.filter((finding) => finding.level === 'risk' || finding.level === 'error'),
                line,
            ).to.equal([]);
        }
    });

    it('without places, refuses what no site may do and any absolute include, and counts every root as a risk', () => {
        expect(() => parseSite(site('include /etc/nginx/proxy_params;'))).to.throw(ValidationError, /^text: line 5: include /);
        expect(() => parseSite(site('access_log /etc/cron.d/evil;'))).to.throw(ValidationError, /^text: line 5: access_log /);
        expect(() => parseSite(site('', 'load_module /tmp/evil.so;'))).to.throw(ValidationError, /^text: line 1: load_module/);
        expect(parseSite(site('include snippets/headers.conf;')).spec.serverNames).to.equal(['wiki.example.com']);
        expect(parseSite(site('ssl_certificate /etc/ssl/wiki.pem;')).spec.serverNames).to.equal(['wiki.example.com']);
        expect(checkSiteText(site('location / { root /srv/www; }')).map((finding) => finding.level)).to.include('risk');
    });

    it("checks the model's extra directives and, with places, its certificate paths and ACME root", () => {
        const model = MODELS['several locations, ports and headers'] as SiteSpec;
        const refused = checkSite({ ...model, extra: 'proxy_read_timeout 5s;\naccess_log /etc/cron.d/evil;' });
        expect(refused.filter((finding) => finding.level === 'error').map((finding) => finding.path)).to.equal(['extra']);
        expect(refused[0]?.message ?? '').to.startWith('line 2: access_log /etc/cron.d/evil: ');
        expect(() => renderSite({ ...model, extra: 'include /etc/shadow;' })).to.throw(
            ValidationError,
            /^extra: line 1: include \/etc\/shadow/,
        );
        const risky = checkSite({ ...model, extra: 'location /files/ {\n    alias /;\n    autoindex on;\n}' });
        expect(risky.filter((finding) => finding.level === 'risk').map((finding) => finding.path)).to.equal(['extra']);
        expect(renderSite({ ...model, extra: 'location /files/ {\n    alias /;\n}' })).to.contain('alias /;');

        const outside = checkSite(model, PLACES).filter((finding) => finding.level === 'error' || finding.level === 'risk');
        expect(outside.map((finding) => `${finding.level} ${finding.path}`)).to.equal([
            'error https.certificate',
            'error https.certificateKey',
            'risk acmeChallengeRoot',
        ]);
        const inside = defaultSite({
            domain: 'wiki.example.com',
            upstreamPort: 8080,
            certificateDir: '/srv/gatehouse/certificates',
            acmeChallengeRoot: '/srv/gatehouse/acme',
        });
        expect(checkSite(inside, PLACES)).to.equal([]);
    });
});

describe('nginx site model: nesting', () => {
    const nested = (depth: number): string => `${'a {\n'.repeat(depth)}${'}\n'.repeat(depth)}`;

    it(`reads blocks nested ${MAX_BLOCK_DEPTH} deep and refuses deeper ones without exhausting the stack`, () => {
        expect(readConf(nested(MAX_BLOCK_DEPTH)).directives).to.have.length(1);
        expect(() => readConf(nested(MAX_BLOCK_DEPTH + 1))).to.throw(
            ConfTooDeepError,
            `line ${MAX_BLOCK_DEPTH + 1}: blocks nested more than ${MAX_BLOCK_DEPTH} deep`,
        );
        const deep = `server {\n${nested(100_000)}}\n`;
        expect(() => parseSite(deep)).to.throw(
            ValidationError,
            `text: line ${MAX_BLOCK_DEPTH + 1}: blocks nested more than ${MAX_BLOCK_DEPTH} deep`,
        );
        expect(() => checkSiteText(deep)).to.throw(ValidationError, /blocks nested more than/);
        const extra = checkSite({ ...(MODELS['the default site'] as SiteSpec), extra: nested(100_000) });
        expect(extra[0]).to.include({ path: 'extra', level: 'error' });
        expect(readConf('a;\n'.repeat(100_000)).directives).to.have.length(100_000);
        expect(readConf(`b {\n${'a;\n'.repeat(100_000)}}`).directives[0]?.block).to.have.length(100_000);
    });

    it('answers too deep a nesting with a ValidationError before nginx is run', async () => {
        await expect(validateSiteText(`server {\n${nested(100_000)}}\n`, { nginxBin: '/nonexistent/nginx' })).to.reject(
            ValidationError,
            /blocks nested more than/,
        );
    });
});

describe('nginx site model: what nginx -t may touch and say', () => {
    const made: string[] = [];

    after(() => {
        for (const path of made) {
            Fs.rmSync(path, { recursive: true, force: true });
        }
    });

    it('refuses before running nginx, and never runs it on text that does not read', async () => {
        const options = { nginxBin: '/nonexistent/nginx', places: PLACES };
        await expect(validateSiteText(site('include /etc/shadow;'), options)).to.reject(
            ValidationError,
            /^text: line 5: include \/etc\/shadow/,
        );
        await expect(validateSiteText(site('include /etc/shadow;'), { nginxBin: '/nonexistent/nginx' })).to.reject(ValidationError);
        const broken = await validateSiteText('include /etc/shadow;\nserver {\n', options);
        expect(broken.errors).to.equal([
            { path: 'text', level: 'error', message: 'unexpected end of file, expecting "}" (line 2)', line: 2 },
        ]);
    });

    it('reads relative includes from the configuration directory, and hides what nginx says about them', needsNginx, async () => {
        const configDir = temporaryDirectory('gatehouse-nginx-conf-');
        made.push(configDir);
        Fs.writeFileSync(Path.join(configDir, 'secret.conf'), 'hunter2-first-word and the rest;\n');
        const result = await validateSiteText(site('include secret.conf;'), { nginxBin: nginx, places: { ...PLACES, configDir } });
        expect(JSON.stringify(result)).to.not.contain('hunter2');
        expect(result.errors).to.equal([{ path: 'text', level: 'error', message: HIDDEN_MESSAGE }]);
    });

    it('makes temp and cache directories inside the test prefix, never on the host', needsNginx, async () => {
        const cache = `/var/lib/nginx/gatehouse-test-${Crypto.randomBytes(6).toString('hex')}`;
        made.push(cache, `${cache}-temp`);
        const text = site(`proxy_temp_path ${cache}-temp;`, `proxy_cache_path ${cache} keys_zone=gatehouse_test:1m;`);
        const result = await validateSiteText(text, { nginxBin: nginx, places: PLACES });
        expect(result, JSON.stringify(result)).to.equal({ ok: true, errors: [], warnings: [] });
        expect(Fs.existsSync(cache)).to.be.false();
        expect(Fs.existsSync(`${cache}-temp`)).to.be.false();
    });

    it('passes on no message that names a file outside the test prefix', () => {
        const prefix = {
            dir: '/tmp/gatehouse-nginx-abc',
            mainConf: '/tmp/gatehouse-nginx-abc/nginx.conf',
            siteConf: '/tmp/gatehouse-nginx-abc/site.conf',
            workspace: '/tmp/gatehouse-nginx-stand-in-xyz',
        };
        const stderr = [
            'nginx: [emerg] unknown directive "hunter2" in /etc/nginx/secret.conf:1',
            `nginx: [emerg] open() "/etc/shadow" failed (13: Permission denied) in ${prefix.siteConf}:4`,
            `nginx: [emerg] cannot load certificate "/nope": BIO_new_file() failed (SSL: error:80000002:system library::No such file or directory:calling fopen(/nope, r)) in ${prefix.siteConf}:5`,
            `nginx: [emerg] duplicate location "/api/" in ${prefix.siteConf}:7`,
            `nginx: [warn] "ssl_stapling" ignored, issuer certificate not found for certificate "${prefix.workspace}/stand-in.crt"`,
            `nginx: [emerg] host not found in upstream "backend.internal" in ${prefix.siteConf}:3`,
            'nginx: configuration file /tmp/gatehouse-nginx-abc/nginx.conf test failed',
        ].join('\n');
        const result = interpretNginxTest({ code: 1, stderr }, prefix);
        expect(result.errors).to.equal([
            { path: 'text', level: 'error', message: HIDDEN_MESSAGE },
            { path: 'text', level: 'error', message: `${HIDDEN_MESSAGE} (line 4)`, line: 4 },
            { path: 'text', level: 'error', message: `${HIDDEN_MESSAGE} (line 5)`, line: 5 },
            { path: 'text', level: 'error', message: 'duplicate location "/api/" (line 7)', line: 7 },
            { path: 'text', level: 'error', message: 'host not found in upstream "backend.internal" (line 3)', line: 3 },
        ]);
        expect(result.warnings).to.equal([
            {
                path: 'text',
                level: 'warning',
                message: '"ssl_stapling" ignored, issuer certificate not found for certificate "<test prefix>/stand-in.crt"',
            },
        ]);
        const crashed = interpretNginxTest({ code: 1, stderr: 'cannot read /root/.ssh/id_rsa: denied' }, prefix);
        expect(crashed.errors).to.equal([{ path: 'text', level: 'error', message: HIDDEN_MESSAGE }]);
    });

    it(`runs at most ${MAX_RUNNING_TESTS} nginx -t at once, queues ${MAX_WAITING_TESTS} more and refuses the rest with 429`, async () => {
        const dir = temporaryDirectory('gatehouse-nginx-slots-');
        made.push(dir);
        // A stand-in nginx that counts how many of it run, and waits until the test lets it go.
        const fake = Path.join(dir, 'nginx');
        Fs.writeFileSync(
            fake,
            `#!/bin/sh\ntouch "${dir}/running.$$"\nls "${dir}" | grep -c '^running' >> "${dir}/counts"\n` +
                `while [ ! -e "${dir}/release" ]; do sleep 0.02; done\nrm "${dir}/running.$$"\nexit 0\n`,
            { mode: 0o755 },
        );
        const text = site('location / { proxy_pass http://127.0.0.1:8080; }');
        const outcomes: Array<'ok' | Error> = [];
        const calls = Array.from({ length: MAX_RUNNING_TESTS + MAX_WAITING_TESTS + 2 }, () =>
            validateSiteText(text, { nginxBin: fake }).then(
                (result) => outcomes.push(result.ok ? 'ok' : new Error(JSON.stringify(result))),
                (error: Error) => outcomes.push(error),
            ),
        );
        const running = () => Fs.readdirSync(dir).filter((name) => name.startsWith('running')).length;
        try {
            await waitUntil(
                'two callers are refused and the others run or wait',
                () => outcomes.length === 2 && running() === MAX_RUNNING_TESTS,
            );
            for (const refused of outcomes) {
                expect(refused).to.be.an.instanceof(NginxBusyError);
                expect((refused as NginxBusyError).statusCode).to.equal(429);
            }
        } finally {
            // Whatever happened, the stand-ins end, and so do the checks waiting for them.
            Fs.writeFileSync(Path.join(dir, 'release'), '');
            await Promise.all(calls);
        }

        expect(outcomes.filter((outcome) => outcome === 'ok')).to.have.length(MAX_RUNNING_TESTS + MAX_WAITING_TESTS);
        const counts = Fs.readFileSync(Path.join(dir, 'counts'), 'utf8').trim().split('\n').map(Number);
        expect(counts).to.have.length(MAX_RUNNING_TESTS + MAX_WAITING_TESTS);
        expect(Math.max(...counts)).to.be.at.most(MAX_RUNNING_TESTS);
    });
});

describe('nginx sites: the upstreams Gatehouse asks directly', () => {
    it('are the loopback ones only, whatever else a hand-written site proxies to', () => {
        const location = (path: string, target: string) => `    location ${path} {\n        proxy_pass ${target};\n    }`;
        const site = [
            'server {',
            '    listen 80;',
            '    server_name notes.apps.test;',
            location('/', 'http://127.0.0.1:8080'),
            location('/v6', 'http://[::1]:9000'),
            location('/metadata', 'http://169.254.169.254'),
            location('/lan', 'http://10.0.0.5:80'),
            location('/named', 'http://127.0.0.1.nip.example:8080'),
            '}',
            '',
        ].join('\n');
        expect(loopbackUpstreams(site)).to.equal(['http://127.0.0.1:8080', 'http://[::1]:9000']);
        expect(loopbackUpstreams(undefined)).to.equal([]);
        expect(loopbackUpstreams('server {')).to.equal([]);
    });
});
