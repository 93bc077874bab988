module example.com/fixture

go 1.27.0
