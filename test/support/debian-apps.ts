/**
 * Apps from Debian's packages that the shipped recipes are tested on (test/plugins/deploy/routes/recipes/tested/):
 * each image is built once with debootstrap (debian-images.ts), its sign-in set up as the package documents it.
 */
import Crypto from 'node:crypto';

import { APACHE_CMD, APACHE_LOGS_TO_OUTPUT, APACHE_SERVER_CONF, type DebianImageSpec, DOKUWIKI } from './debian-images.ts';

/** The account Transmission's RPC and web interface ask for (HTTP Basic). */
export const TRANSMISSION_ACCOUNT = { username: 'transmission', password: 'transmission-rpc-pass' };

/**
 * Transmission's settings as Debian's transmission-daemon reads them (/etc/transmission-daemon/settings.json): the
 * RPC and web interface on port 9091 for every address, behind HTTP Basic with TRANSMISSION_ACCOUNT (the daemon
 * replaces the clear password with its hash when it starts), and nothing that reaches out to peers.
 */
const TRANSMISSION_SETTINGS = {
    'rpc-enabled': true,
    'rpc-bind-address': '0.0.0.0',
    'rpc-port': 9091,
    'rpc-authentication-required': true,
    'rpc-username': TRANSMISSION_ACCOUNT.username,
    'rpc-password': TRANSMISSION_ACCOUNT.password,
    'rpc-whitelist-enabled': false,
    'rpc-host-whitelist-enabled': false,
    'download-dir': '/var/lib/transmission-daemon/downloads',
    'dht-enabled': false,
    'lpd-enabled': false,
    'pex-enabled': false,
    'port-forwarding-enabled': false,
    'utp-enabled': false,
};

/** Debian's transmission-daemon in the foreground, its web interface at /transmission/web/. */
export const TRANSMISSION: DebianImageSpec = {
    name: 'gatehouse-test/transmission',
    packages: ['transmission-daemon'],
    files: {
        '/etc/transmission-daemon/settings.json': `${JSON.stringify(TRANSMISSION_SETTINGS, null, 4)}\n`,
    },
    commands: ['mkdir -p /var/lib/transmission-daemon/downloads'],
    cmd: ['transmission-daemon', '--foreground', '--config-dir', '/etc/transmission-daemon', '--log-info'],
    expose: [9091],
};

/**
 * Debian's DokuWiki (the DOKUWIKI image's wiki, admin and ACLs) served at the site's root, as the images users run
 * serve it (LinuxServer.io's, Bitnami's), so that a recipe's paths are the same on both: /doku.php?do=login.
 */
export const DOKUWIKI_AT_ROOT: DebianImageSpec = {
    ...DOKUWIKI,
    name: 'gatehouse-test/dokuwiki-root',
    files: {
        ...DOKUWIKI.files,
        [APACHE_SERVER_CONF]: 'ServerName localhost\nDocumentRoot /usr/share/dokuwiki\n',
        '/etc/dokuwiki/apache.conf': [
            '<Directory /usr/share/dokuwiki/>',
            '    Options +FollowSymLinks',
            '    AllowOverride All',
            '    Require all granted',
            '</Directory>',
            '<Directory /usr/share/dokuwiki/bin>',
            '    Require all denied',
            '</Directory>',
            '<Directory /var/lib/dokuwiki/data>',
            '    Require all denied',
            '</Directory>',
            '',
        ].join('\n'),
    },
    commands: ['a2dissite -q 000-default', ...(DOKUWIKI.commands ?? [])],
};

/** MediaWiki's administrator, made by its installer when the image is built. */
export const MEDIAWIKI_ADMIN = { username: 'Admin', password: 'mediawiki-admin-pass' };

/**
 * Debian's MediaWiki on SQLite, installed by its own installer (maintenance/install.php) when the image is built and
 * served at the site's root, as the official image serves it; the site's address comes from each request
 * (WebRequest::detectServer) rather than the installer's.
 */
export const MEDIAWIKI: DebianImageSpec = {
    name: 'gatehouse-test/mediawiki',
    packages: ['apache2', 'libapache2-mod-php8.2', 'php-sqlite3', 'php-intl', 'php-mbstring', 'php-xml', 'mediawiki'],
    files: {
        [APACHE_SERVER_CONF]: 'ServerName localhost\nDocumentRoot /var/lib/mediawiki\n',
        '/etc/mediawiki/apache.conf': [
            '<Directory /var/lib/mediawiki/>',
            '    Options +FollowSymLinks',
            '    AllowOverride All',
            '    Require all granted',
            '</Directory>',
            '',
        ].join('\n'),
    },
    commands: [
        'mkdir -p /var/lib/mediawiki/data',
        [
            'php /usr/share/mediawiki/maintenance/install.php --dbtype=sqlite --dbpath=/var/lib/mediawiki/data',
            `--server=http://localhost --scriptpath= --lang=en --confpath=/etc/mediawiki --pass=${MEDIAWIKI_ADMIN.password}`,
            `'Gatehouse Test Wiki' ${MEDIAWIKI_ADMIN.username}`,
        ].join(' '),
        "echo '$wgServer = WebRequest::detectServer();' >> /etc/mediawiki/LocalSettings.php",
        'chown -R www-data:www-data /var/lib/mediawiki/data',
        'a2dissite -q 000-default',
        'a2enconf -q gatehouse-test mediawiki',
        ...APACHE_LOGS_TO_OUTPUT,
        'apache2ctl -t',
    ],
    cmd: APACHE_CMD,
    expose: [80],
};

/** The Icinga Web 2 user the image's roles make an administrator (the app's admin account at the provider). */
export const ICINGAWEB2_ADMIN = 'ops-admin';

/**
 * Debian's Icinga Web 2 with external authentication (authentication.ini: backend external): it takes the user the
 * web server names in REMOTE_USER, which Apache sets from the Remote-User header the proxy sends (the header
 * method), as Icinga's documentation of external authentication describes. ICINGAWEB2_ADMIN is an administrator;
 * anyone else is a user without permissions.
 */
export const ICINGAWEB2: DebianImageSpec = {
    name: 'gatehouse-test/icingaweb2',
    packages: ['apache2', 'libapache2-mod-php8.2', 'icingaweb2', 'php-intl', 'php-curl'],
    files: {
        [APACHE_SERVER_CONF]: [
            'ServerName localhost',
            'RedirectMatch 302 ^/$ /icingaweb2/',
            'SetEnvIfNoCase ^Remote-User$ "^(.+)$" REMOTE_USER=$1',
            '',
        ].join('\n'),
        '/etc/icingaweb2/config.ini':
            '[global]\nshow_stacktraces = "0"\nconfig_backend = "ini"\n\n[logging]\nlog = "php"\nlevel = "ERROR"\n',
        '/etc/icingaweb2/authentication.ini': '[webserver]\nbackend = "external"\n',
        '/etc/icingaweb2/roles.ini': `[Administrators]\nusers = "${ICINGAWEB2_ADMIN}"\npermissions = "*"\n`,
    },
    commands: [
        'rm -f /etc/icingaweb2/setup.token',
        'chown -R www-data /etc/icingaweb2',
        'a2dissite -q 000-default',
        'a2enconf -q gatehouse-test',
        ...APACHE_LOGS_TO_OUTPUT,
        'apache2ctl -t',
    ],
    cmd: APACHE_CMD,
    expose: [80],
};

/** The database account phpMyAdmin signs every visitor in with (its `config` authentication). */
export const PHPMYADMIN_DATABASE_ACCOUNT = { username: 'pma', password: 'pma-database-pass' };

/**
 * MariaDB, then Apache: the database account phpMyAdmin uses is made at each start (the image holds no database
 * server state of a run before).
 */
const PHPMYADMIN_START = `#!/bin/sh
set -e
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
mariadbd --user=mysql --skip-networking --socket=/run/mysqld/mysqld.sock &
tries=0
until mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1; do
  tries=$((tries + 1)); [ "$tries" -lt 300 ] || exit 1; sleep 0.1
done
mariadb --socket=/run/mysqld/mysqld.sock -e "CREATE USER IF NOT EXISTS '${PHPMYADMIN_DATABASE_ACCOUNT.username}'@'localhost' IDENTIFIED BY '${PHPMYADMIN_DATABASE_ACCOUNT.password}'; GRANT ALL PRIVILEGES ON *.* TO '${PHPMYADMIN_DATABASE_ACCOUNT.username}'@'localhost'"
rm -rf /run/apache2/*
exec apache2ctl -D FOREGROUND
`;

/**
 * Debian's phpMyAdmin with a MariaDB beside it, served at the site's root as the official image serves it, its own
 * login off: `auth_type = config` with one database account, as the official image's PMA_USER and PMA_PASSWORD set.
 */
export const PHPMYADMIN: DebianImageSpec = {
    name: 'gatehouse-test/phpmyadmin',
    packages: ['apache2', 'libapache2-mod-php8.2', 'php-mysql', 'php-mbstring', 'mariadb-server', 'phpmyadmin'],
    files: {
        [APACHE_SERVER_CONF]: 'ServerName localhost\nDocumentRoot /usr/share/phpmyadmin\n',
        '/etc/phpmyadmin/conf.d/gatehouse-test.php': [
            '<?php',
            "$cfg['Servers'][1]['auth_type'] = 'config';",
            "$cfg['Servers'][1]['host'] = 'localhost';",
            `$cfg['Servers'][1]['user'] = '${PHPMYADMIN_DATABASE_ACCOUNT.username}';`,
            `$cfg['Servers'][1]['password'] = '${PHPMYADMIN_DATABASE_ACCOUNT.password}';`,
            // No configuration storage: Debian's dbconfig-common names a control user this image has no database for.
            "$cfg['Servers'][1]['controluser'] = '';",
            "$cfg['Servers'][1]['controlpass'] = '';",
            "$cfg['Servers'][1]['pmadb'] = '';",
            '',
        ].join('\n'),
        '/usr/local/bin/start-phpmyadmin': PHPMYADMIN_START,
    },
    commands: ['a2dissite -q 000-default', 'a2enconf -q gatehouse-test', ...APACHE_LOGS_TO_OUTPUT, 'apache2ctl -t'],
    cmd: ['/usr/local/bin/start-phpmyadmin'],
    expose: [80],
};

/** Nagios's administrator, whom the CGIs let see and do everything (cgi.cfg's authorized_for_* lines name it). */
export const NAGIOS_ADMIN = { username: 'nagiosadmin', password: 'nagios-admin-pass' };

/** An htpasswd line in Apache's `{SHA}` form, made here so that nothing needs the htpasswd binary. */
function htpasswdLine(user: string, password: string): string {
    return `${user}:{SHA}${Crypto.createHash('sha1').update(password).digest('base64')}\n`;
}

/**
 * Debian's Nagios 4 with its web interface behind HTTP Basic (the package's Apache file, with Basic in place of the
 * private-address rule its comments suggest replacing) and the CGIs' own authorisation on (use_authentication=1),
 * the daemon running beside Apache.
 */
export const NAGIOS4: DebianImageSpec = {
    name: 'gatehouse-test/nagios4',
    // Nagios's mail needs a mail transport agent: msmtp's is the lightest (debootstrap does not pick one itself).
    packages: ['apache2', 'msmtp-mta', 'nagios4'],
    files: {
        [APACHE_SERVER_CONF]: 'ServerName localhost\nRedirectMatch 302 ^/$ /nagios4/\n',
        '/etc/apache2/conf-available/nagios4-cgi.conf': [
            'ScriptAlias /cgi-bin/nagios4 /usr/lib/cgi-bin/nagios4',
            'ScriptAlias /nagios4/cgi-bin /usr/lib/cgi-bin/nagios4',
            'Alias /nagios4/stylesheets /etc/nagios4/stylesheets',
            'Alias /nagios4 /usr/share/nagios4/htdocs',
            '<DirectoryMatch (/usr/share/nagios4/htdocs|/usr/lib/cgi-bin/nagios4|/etc/nagios4/stylesheets)>',
            '    Options FollowSymLinks',
            '    DirectoryIndex index.php index.html',
            '    AuthType Basic',
            '    AuthName "Nagios4"',
            '    AuthUserFile /etc/nagios4/htpasswd.users',
            '    Require valid-user',
            '</DirectoryMatch>',
            '',
        ].join('\n'),
        '/etc/nagios4/htpasswd.users': htpasswdLine(NAGIOS_ADMIN.username, NAGIOS_ADMIN.password),
        '/usr/local/bin/start-nagios4':
            '#!/bin/sh\nset -e\nnagios4 -d /etc/nagios4/nagios.cfg\nrm -rf /run/apache2/*\nexec apache2ctl -D FOREGROUND\n',
    },
    commands: [
        "sed -i 's/^use_authentication=0/use_authentication=1/' /etc/nagios4/cgi.cfg",
        'a2dissite -q 000-default',
        'a2enmod -q cgid',
        'a2enconf -q gatehouse-test nagios4-cgi',
        ...APACHE_LOGS_TO_OUTPUT,
        'apache2ctl -t',
    ],
    cmd: ['/usr/local/bin/start-nagios4'],
    expose: [80],
};

/**
 * Debian's Netdata with its dashboard on every address of the container (the package binds it to 127.0.0.1: its
 * comment says it is not meant for hostile networks, which is what forward auth in front is for), in the foreground.
 */
export const NETDATA: DebianImageSpec = {
    name: 'gatehouse-test/netdata',
    packages: ['netdata-core', 'netdata-web'],
    files: {
        '/etc/netdata/netdata.conf': [
            '[global]',
            '\trun as user = netdata',
            '\tweb files owner = root',
            '\tweb files group = root',
            '\tbind socket to IP = 0.0.0.0',
            '[health]',
            '\tenabled = no',
            '',
        ].join('\n'),
    },
    cmd: ['netdata', '-D'],
    expose: [19999],
};
