module github.com/deviceshare/deviceshare/bindings/go

go 1.19
