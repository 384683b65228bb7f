/** Two or three real examples of each command, shown at the end of its help. */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  query: [
    'mission-data query --instrument mag --start-date 20250101 --end-date 20250131',
    'mission-data query --instrument swe --version latest --output-format csv',
    'mission-data query --table ancillary --instrument mag --output-format json',
    'mission-data query --instrument hi --data-level l3a --repointing 42',
    'mission-data query --table spice --type leapseconds --version latest',
  ],
  download: [
    'mission-data download imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
    "mission-data download 'imap_mag_l2_norm_202501*'",
    'mission-data download --instrument mag --data-level l1a --start-date 20250101',
    'mission-data query --instrument hit --output-format json \\\n    | mission-data download -',
  ],
  sync: [
    'mission-data sync --instrument mag --data-level l1a',
    'mission-data sync --instrument swe --prune | xargs -r process-new-files',
    'mission-data sync --instrument mag --watch 10m',
  ],
  upload: [
    'mission-data upload imap_mag_l1a_norm-mago_20250101_20250101_v01-00.cdf',
    'MISSION_API_KEY=… mission-data upload imap/swe/l0/2025/01/*.pkts',
    'mission-data upload --data-dir /srv/mission/data imap/hit/l1a/2025/02/*.cdf',
  ],
  coverage: [
    'mission-data coverage --instrument mag --data-level l1a --start-date 20250101',
    'mission-data coverage --instrument swe --output-format csv > swe-days.csv',
    'mission-data coverage --instrument mag --html mag-coverage.html',
  ],
  status: [
    'mission-data status --instrument mag --start-date 20250101 --end-date 20250131',
    'mission-data status --instrument swe --data-level l1b --output-format json',
    'mission-data status --instrument mag && echo in step',
  ],
  verify: [
    'mission-data verify --instrument mag',
    'mission-data verify --instrument swe --start-date 20250101 --repair',
    'mission-data verify --instrument mag --not-verified-since 20250101 --output-format json',
  ],
  serve: [
    'mission-data serve --demo',
    'mission-data serve --port 0 --store ./store --api-key secret',
    'mission-data serve --host 0.0.0.0 --port 8080 --wire gateway',
  ],
  config: [
    'mission-data config list',
    'mission-data config set url http://127.0.0.1:8080',
    'mission-data config get data-dir',
  ],
  list: ['mission-data config list', 'mission-data config list --url http://127.0.0.1:8080'],
  get: ['mission-data config get url', 'mission-data config get api-key'],
  set: [
    'mission-data config set url http://127.0.0.1:8080',
    'mission-data config set data-dir ~/mission-data',
  ],
  unset: ['mission-data config unset api-key'],
  completion: [
    'eval "$(mission-data completion bash)"         # in ~/.bashrc (bash 3.2 too)',
    'mission-data completion powershell | Out-String | iex   # in $PROFILE',
    'mission-data completion zsh > ~/.zsh/completions/_mission-data',
    'mission-data completion fish > ~/.config/fish/completions/mission-data.fish',
  ],
};
