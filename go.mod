module github.com/nasemu/nasemu

go 1.26

require github.com/spf13/pflag v1.1.0
