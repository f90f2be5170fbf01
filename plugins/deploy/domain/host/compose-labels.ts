/** The labels Docker Compose puts on what it creates; the deploy runs put the same, and the status page reads them. */
export const LABEL = {
    project: 'com.docker.compose.project',
    service: 'com.docker.compose.service',
    number: 'com.docker.compose.container-number',
    oneoff: 'com.docker.compose.oneoff',
    hash: 'com.docker.compose.config-hash',
    workingDir: 'com.docker.compose.project.working_dir',
    configFiles: 'com.docker.compose.project.config_files',
    dependsOn: 'com.docker.compose.depends_on',
    image: 'com.docker.compose.image',
    version: 'com.docker.compose.version',
    network: 'com.docker.compose.network',
    volume: 'com.docker.compose.volume',
    /** Ours: the object was made by Gatehouse (delete removes only these unless told otherwise). */
    managed: 'io.gatehouse.managed',
} as const;
