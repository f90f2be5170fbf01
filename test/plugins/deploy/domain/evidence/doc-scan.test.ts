import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import {
    type DocFinding,
    type DocMethod,
    type DocPlace,
    MAX_FINDING_LENGTH,
    MAX_FINDINGS_PER_METHOD,
    MAX_SCANNED_BYTES,
    scanImageDocs,
} from '../../../../../plugins/deploy/domain/evidence/doc-scan.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

type Row = [string, DocMethod[]];

function brief(findings: DocFinding[]): string[][] {
    return findings.map((finding) => [finding.method, finding.what, finding.text]);
}

function expected(methods: DocMethod[], what: DocPlace, text: string): string[][] {
    return methods.map((method) => [method, what, text]);
}

describe('doc scan: environment variable names', () => {
    const rows: Row[] = [
        ['OIDC_ISSUER', ['oidc']],
        ['oidc_client_id', ['oidc']],
        ['OPENID_CONNECT_URL', ['oidc']],
        ['OAUTH2_CLIENT_ID', ['oidc']],
        ['OAUTH_ENABLED', ['oidc']],
        ['GENERIC_OAUTH_CLIENT_ID', ['oidc']],
        ['GF_AUTH_GENERIC_OAUTH_ENABLED', ['oidc']],
        ['SAML_IDP_METADATA_URL', ['saml']],
        ['AUTH_SAML_ENABLED', ['saml']],
        ['REMOTE_USER', ['header']],
        ['REMOTE_USER_HEADER', ['header']],
        ['AUTH_PROXY_HEADER', ['header']],
        ['GF_AUTH_PROXY_ENABLED', ['header']],
        ['SSO_TRUSTED_HEADER_NAME', ['header']],
        ['PROXY_AUTH_ADD', ['header']],
        ['DISABLE_AUTH', ['none']],
        ['DISABLE_AUTHENTICATION', ['none']],
        ['AUTH_DISABLED', ['none']],
        ['JUPYTER_NO_AUTH', ['none']],
        ['BASIC_AUTH_USER', ['basic']],
        ['NGINX_AUTH_BASIC', ['basic']],
        ['LDAP_HOST', ['ldap']],
        ['AUTH_LDAP_ENABLED', ['ldap']],
        ['LDAP_BASIC_AUTH', ['basic', 'ldap']],
        // Negatives: the word inside a longer one, or a name that only looks related.
        ['PATH', []],
        ['LOAUTHOR', []],
        ['NOAUTH', []],
        ['AUTHOR_NAME', []],
        ['DISABLE_AUTHOR', []],
        ['AUTH_TOKEN', []],
        ['SAMPLE_RATE', []],
        ['HTTP_PROXY', []],
        ['OPENLDAP_ROOT_PASSWORD', []],
    ];

    for (const [name, methods] of rows) {
        it(`${name}: ${methods.join(', ') || 'nothing'}`, () => {
            expect(brief(scanImageDocs({ env: [`${name}=value`] }))).to.equal(expected(methods, 'env', name));
        });
    }

    it('reads names only, never values (they may be secrets), and each name once', () => {
        expect(scanImageDocs({ env: ['APP_SETTINGS=oidc saml ldap --auth none', 'HOME=/ldap'] })).to.equal([]);
        expect(brief(scanImageDocs({ env: ['OIDC_SECRET=s3cr3t', 'OIDC_SECRET=other', 'LDAP_URL'] }))).to.equal([
            ['oidc', 'env', 'OIDC_SECRET'],
            ['ldap', 'env', 'LDAP_URL'],
        ]);
    });
});

describe('doc scan: mentions in texts (description, labels, README)', () => {
    const rows: Row[] = [
        ['Supports single sign-on with OpenID Connect.', ['oidc']],
        ['Log in with any OIDC provider', ['oidc']],
        ['OAuth2 login with GitHub, Google or Keycloak', ['oidc']],
        ['Set OIDC_ISSUER_URL to the issuer of your provider', ['oidc']],
        ['Runs behind oauth2-proxy', ['oidc']],
        ['OAuth 2.0 and SAML 2.0 are both supported', ['oidc', 'saml']],
        ['Enterprise single sign-on via SAML', ['saml']],
        ['Trusts the Remote-User header set by your proxy', ['header']],
        ['Reads the user from X-Forwarded-User', ['header']],
        ['Use a trusted header from Authelia', ['header']],
        ['Works behind an auth proxy', ['header']],
        ['Use the Traefik forwardAuth middleware', ['header']],
        ['Reverse proxy authentication is supported', ['header']],
        ['Header-based authentication', ['header']],
        ['Set DISABLE_AUTH=true to turn off the login', ['none']],
        ['You can disable authentication when it runs behind a proxy', ['none']],
        ['There is no authentication, so put it behind a proxy', ['none']],
        ['Start mongod with --noauth', ['none']],
        ['auth: none', ['none']],
        ['Run it with `--auth none`', ['none']],
        ['Set auth_method = "none"', ['none']],
        ['Protect it with HTTP Basic auth', ['basic']],
        ['Supports basic authentication', ['basic']],
        ['Send Authorization: Basic with each request', ['basic']],
        ['Authenticate users against LDAP', ['ldap']],
        ['Point it at ldaps://ldap.example.com:636', ['ldap']],
        ['Works with OpenLDAP', ['ldap']],
        // Negatives: words that contain the terms, and neighbouring words.
        ['A tool by the loauthor team', []],
        ['Requires authorization for the admin pages', []],
        ['Basic usage: run the container', []],
        ['The author disabled authorization checks', []],
        ['A sample app for your samples', []],
        ['An open identity manager', []],
        ['Remote users can connect over VPN', []],
        ['Set the forwarded headers for correct links', []],
        ['Uses Azure Active Directory', []],
        ['Proxy-Authorization for the outbound proxy', []],
    ];

    for (const [text, methods] of rows) {
        it(`${JSON.stringify(text)}: ${methods.join(', ') || 'nothing'}`, () => {
            expect(brief(scanImageDocs({ description: text })), 'description').to.equal(expected(methods, 'description', text));
            expect(brief(scanImageDocs({ labels: { 'org.opencontainers.image.description': text } })), 'label').to.equal(
                expected(methods, 'label', text),
            );
            expect(brief(scanImageDocs({ readme: `# App\n\n${text}\n` })), 'readme').to.equal(expected(methods, 'readme', text));
        });
    }
});

describe('doc scan: order, limits and excerpts', () => {
    it('orders by method (oidc, saml, header, none, basic, ldap), then env, label, description, readme', () => {
        const findings = scanImageDocs({
            readme: 'Supports LDAP.\nSupports SAML.\nSupports OIDC.',
            description: 'LDAP and OIDC login.',
            labels: { 'org.example.auth': 'Basic auth or OIDC' },
            env: ['LDAP_HOST=x', 'OIDC_ISSUER=y', 'DISABLE_AUTH=true'],
        });
        expect(brief(findings)).to.equal([
            ['oidc', 'env', 'OIDC_ISSUER'],
            ['oidc', 'label', 'Basic auth or OIDC'],
            ['oidc', 'description', 'LDAP and OIDC login.'],
            ['oidc', 'readme', 'Supports OIDC.'],
            ['saml', 'readme', 'Supports SAML.'],
            ['none', 'env', 'DISABLE_AUTH'],
            ['basic', 'label', 'Basic auth or OIDC'],
            ['ldap', 'env', 'LDAP_HOST'],
            ['ldap', 'description', 'LDAP and OIDC login.'],
            ['ldap', 'readme', 'Supports LDAP.'],
        ]);
    });

    it(`keeps at most ${MAX_FINDINGS_PER_METHOD} findings per method, the first ones`, () => {
        const readme = Array.from({ length: 8 }, (_, index) => `Step ${index}: configure OIDC`).join('\n');
        const findings = scanImageDocs({ env: ['OIDC_A=1', 'OIDC_B=2'], readme: `${readme}\nAlso LDAP` });
        expect(brief(findings)).to.equal([
            ['oidc', 'env', 'OIDC_A'],
            ['oidc', 'env', 'OIDC_B'],
            ['oidc', 'readme', 'Step 0: configure OIDC'],
            ['oidc', 'readme', 'Step 1: configure OIDC'],
            ['oidc', 'readme', 'Step 2: configure OIDC'],
            ['ldap', 'readme', 'Also LDAP'],
        ]);
    });

    it('gives one finding per method, place and text', () => {
        const findings = scanImageDocs({ description: 'Supports SAML.', readme: 'Supports SAML.\n\nSupports SAML.\r\nSupports  SAML.' });
        expect(brief(findings)).to.equal([
            ['saml', 'description', 'Supports SAML.'],
            ['saml', 'readme', 'Supports SAML.'],
        ]);
    });

    it('reads labels in the order of their keys, and their values only', () => {
        const findings = scanImageDocs({ labels: { 'z.second': 'Uses LDAP too', 'a.first': 'Supports LDAP', 'ldap.key': 'nothing here' } });
        expect(brief(findings)).to.equal([
            ['ldap', 'label', 'Supports LDAP'],
            ['ldap', 'label', 'Uses LDAP too'],
        ]);
    });

    it('shows the sentence of a description, and the line of a README', () => {
        const text = 'A wiki for teams. It signs users in with SAML. It stores pages in Git.';
        expect(brief(scanImageDocs({ description: text }))).to.equal([['saml', 'description', 'It signs users in with SAML.']]);
        expect(brief(scanImageDocs({ readme: text }))).to.equal([['saml', 'readme', text]]);
    });

    it('keeps configuration examples in fenced code blocks, and drops Markdown list and heading marks', () => {
        const readme = ['## Single sign-on with SAML', '', '```yaml', 'environment:', '  - OIDC_ISSUER=https://id.example.com', '```'].join(
            '\n',
        );
        expect(brief(scanImageDocs({ readme }))).to.equal([
            ['oidc', 'readme', 'OIDC_ISSUER=https://id.example.com'],
            ['saml', 'readme', 'Single sign-on with SAML'],
        ]);
    });

    it(`cuts a long README line to its sentence, and a long sentence to ${MAX_FINDING_LENGTH} characters around the match`, () => {
        const filler = 'This sentence is only here to make the line long enough to need cutting. '.repeat(4);
        expect(brief(scanImageDocs({ readme: `${filler}Sign in with OpenID Connect. ${filler}` }))).to.equal([
            ['oidc', 'readme', 'Sign in with OpenID Connect.'],
        ]);

        const words = 'word '.repeat(100);
        for (const input of [{ readme: `${words}LDAP ${words}` }, { description: `${words}LDAP ${words}` }]) {
            const [finding, ...others] = scanImageDocs(input);
            expect(others).to.equal([]);
            const text = finding?.text ?? '';
            expect(text.length).to.be.at.most(MAX_FINDING_LENGTH);
            expect(text).to.startWith('…');
            expect(text).to.endWith('…');
            expect(text).to.contain(' LDAP ');
        }

        const start = scanImageDocs({ readme: `LDAP ${words}` })[0]?.text;
        expect(start).to.equal(`LDAP ${words}`.slice(0, MAX_FINDING_LENGTH - 2) + '…');
    });

    it(`reads the first ${MAX_SCANNED_BYTES / 1024} KB of a README, counted in UTF-8 bytes`, () => {
        const within = `${'x'.repeat(MAX_SCANNED_BYTES - 100)}\nSupports LDAP`;
        expect(brief(scanImageDocs({ readme: within }))).to.equal([['ldap', 'readme', 'Supports LDAP']]);
        expect(scanImageDocs({ readme: `${'x'.repeat(MAX_SCANNED_BYTES)}\nSupports LDAP` })).to.equal([]);
        // Half as many characters as the limit, but two bytes each.
        expect(scanImageDocs({ readme: `${'é'.repeat(MAX_SCANNED_BYTES / 2 + 10)}\nSupports LDAP` })).to.equal([]);
    });

    it('finds nothing in nothing', () => {
        expect(scanImageDocs({})).to.equal([]);
        expect(scanImageDocs({ env: [], labels: {}, description: '', readme: '' })).to.equal([]);
    });
});
