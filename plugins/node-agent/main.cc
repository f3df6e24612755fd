// deviceshare-node-agent: placeholder until the command line lands.
int main() { return 2; }
