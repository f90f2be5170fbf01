import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ConfigError, loadConfig } from '../../lib/config.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('configuration from the environment', () => {
    it('has working defaults for a fresh machine', () => {
        const config = loadConfig({});
        expect(config.port).to.equal(3000);
        expect(config.listenHost).to.equal('127.0.0.1');
        expect(config.dataDir).to.equal(Path.resolve('data'));
        expect(config.databaseUrl).to.equal(`sqlite:${Path.resolve('data', 'gatehouse.sqlite')}`);
        expect(config.services).to.equal(['git', 'deploy']);
        expect(config.publicUrl).to.equal('http://127.0.0.1:3000/');
        expect(config.logLevel).to.equal('info');
        expect(config.masterKey).to.be.undefined();
    });

    it('reads every variable', () => {
        const config = loadConfig({
            PORT: '8080',
            HOST: '::1',
            PUBLIC_URL: 'https://git.example.com/gatehouse',
            DATA_DIR: '/var/lib/gatehouse',
            DATABASE_URL: 'mysql://root@127.0.0.1:3306/gatehouse',
            SERVICES: 'git',
            MASTER_KEY: 'ab'.repeat(32),
            LOG_LEVEL: 'warn',
        });
        expect(config).to.include({ port: 8080, listenHost: '::1', dataDir: '/var/lib/gatehouse', logLevel: 'warn' });
        expect(config.publicUrl).to.equal('https://git.example.com/gatehouse/');
        expect(config.services).to.equal(['git']);
        expect(config.databaseUrl).to.equal('mysql://root@127.0.0.1:3306/gatehouse');
    });

    it('derives the public URL from an IPv6 host', () => {
        expect(loadConfig({ HOST: '::1', PORT: '4000' }).publicUrl).to.equal('http://[::1]:4000/');
    });

    it('names every bad variable in one clear error', () => {
        const attempt = () =>
            loadConfig({ PORT: 'eighty', SERVICES: 'git,mail', MASTER_KEY: 'short', LOG_LEVEL: 'loud', DATABASE_URL: 'postgres://x' });
        expect(attempt).to.throw(ConfigError);
        try {
            attempt();
        } catch (error) {
            const message = (error as Error).message;
            for (const name of ['PORT', 'SERVICES', 'MASTER_KEY', 'LOG_LEVEL', 'DATABASE_URL']) {
                expect(message).to.contain(name);
            }
        }
    });

    it('reads the sign-in limits and the trusted proxies, and stops at a bad CIDR', () => {
        const defaults = loadConfig({});
        expect(defaults.trustedProxies).to.equal([]);
        expect(defaults.signInLimits).to.equal({
            windowSeconds: 900,
            maxFailures: 5,
            maxFailuresPerAccount: 10,
            maxFailuresPerAddress: 20,
            backoffSeconds: 1,
        });
        const config = loadConfig({ TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,::1', LOGIN_MAX_FAILURES: '3', LOGIN_BACKOFF_SECONDS: '30' });
        expect(config.trustedProxies).to.equal(['127.0.0.1/32', '10.0.0.0/8', '::1/128']);
        expect(config.signInLimits).to.include({ maxFailures: 3, backoffSeconds: 30 });
        expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/33' })).to.throw(ConfigError, /TRUSTED_PROXIES.*10\.0\.0\.0\/33/);
        expect(() => loadConfig({ LOGIN_MAX_FAILURES: '0' })).to.throw(ConfigError, /LOGIN_MAX_FAILURES/);
    });

    it('reads where image look-ups may go (external unless set), and stops at a list it cannot read', () => {
        expect(loadConfig({}).host.hubAllowedHostList).to.equal('external');
        expect(loadConfig({ HUB_ALLOWED_HOST_LIST: 'external,10.0.0.0/8' }).host.hubAllowedHostList).to.equal('external,10.0.0.0/8');
        for (const list of ['10.0.0.0/33', 'external;loopback']) {
            expect(() => loadConfig({ HUB_ALLOWED_HOST_LIST: list }), list).to.throw(
                ConfigError,
                /HUB_ALLOWED_HOST_LIST: a comma-separated list/,
            );
        }
    });

    it('keeps the terminal off unless TERMINAL_ENABLED, with an idle time in minutes or, finer, in seconds', () => {
        expect(loadConfig({}).terminal).to.equal({ enabled: false, idleSeconds: 15 * 60 });
        expect(loadConfig({ TERMINAL_ENABLED: '1', TERMINAL_IDLE_MINUTES: '30' }).terminal).to.equal({ enabled: true, idleSeconds: 1800 });
        expect(loadConfig({ TERMINAL_ENABLED: 'true', TERMINAL_IDLE_SECONDS: '5', TERMINAL_IDLE_MINUTES: '30' }).terminal).to.equal({
            enabled: true,
            idleSeconds: 5,
        });
        expect(loadConfig({ TERMINAL_ENABLED: '0' }).terminal.enabled).to.be.false();
        for (const [name, value] of [
            ['TERMINAL_ENABLED', 'yes'],
            ['TERMINAL_IDLE_MINUTES', '0'],
            ['TERMINAL_IDLE_MINUTES', '1441'],
            ['TERMINAL_IDLE_MINUTES', '1.5'],
            ['TERMINAL_IDLE_SECONDS', '0'],
        ] as const) {
            expect(() => loadConfig({ [name]: value }), `${name}=${value}`).to.throw(ConfigError, new RegExp(name));
        }
    });
});
